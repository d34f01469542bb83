#pragma once
// The LifecycleStore contract of the ways an invocation ends without its handler succeeding or
// exhausting its attempts (docs/pipeline.md "Cancellation", docs/apps.md "Deadlines") and of
// replay copies' plans (docs/replay.md): the same Backend as lifecycle_store_contract.h, plus
//
//     std::string publish();                     // a new message id, in the stream, not read
//     void read(const std::string& id);          // the group reads it (to "w1")
//     std::vector<std::tuple<std::string, std::string, std::string>> cancels();
//                                                // the cancels stream: (id, field, token)
#include <tuple>

#include "contract/lifecycle_store_contract.h"

namespace relay::invocation::contract {

template <typename Backend>
class LifecycleStoreEndings : public LifecycleStoreContract<Backend> {
 protected:
  CancelVerdict cancel(const std::string& id, std::string target = "*", bool dead_letter = false) {
    auto verdict = this->store().cancel(id, CancelRequest{std::move(target), dead_letter, "c1"});
    EXPECT_TRUE(verdict.ok()) << verdict.error().message;
    return verdict.ok() ? *verdict : CancelVerdict{};
  }
  static Plan withLimits(milliseconds deadline, milliseconds start_timeout) {
    Plan plan = LifecycleStoreContract<Backend>::one(3);
    plan.invocations[0].deadline = deadline;
    plan.invocations[0].start_timeout = start_timeout;
    return plan;
  }
  /// The failure of a running attempt that its worker stopped for a cancellation.
  static AttemptResult stopped() {
    AttemptResult result = failure("cancelled");
    result.cancelled = true;
    return result;
  }
};

TYPED_TEST_SUITE_P(LifecycleStoreEndings);

TYPED_TEST_P(LifecycleStoreEndings, ACancelledInvocationWaitingForARetryIsTerminalAndAcked) {
  const std::string id = this->backend_.deliver();
  this->start(id, this->one(), "t1");
  this->begin(id, "shop/h", "t1");
  EXPECT_EQ(this->complete(id, "shop/h", "t1", failure("exit 3", milliseconds(10'000))).kind,
            CompleteVerdict::Kind::kFailed);
  const CancelVerdict verdict = this->cancel(id);
  EXPECT_EQ(verdict.kind, CancelVerdict::Kind::kApplied);
  EXPECT_TRUE(verdict.acked);
  ASSERT_EQ(verdict.invocations.size(), 1u);
  EXPECT_EQ(verdict.invocations[0].what, CancelledInvocation::What::kCancelled);
  const auto m = this->marker(id, "shop/h");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->state, Marker::State::kCancelled);
  EXPECT_EQ(m->attempt, 1);
  EXPECT_TRUE(m->terminal());
  EXPECT_EQ(this->backend_.field(id, "relay:reason:shop/h"), "cancelled (last attempt: exit 3)");
  EXPECT_FALSE(this->backend_.pending(id));
  EXPECT_TRUE(this->backend_.ttl(id));  // retained
  EXPECT_FALSE(this->backend_.dueAt(id));
  EXPECT_TRUE(this->backend_.dlq().empty());
  EXPECT_EQ(this->cancel(id).kind, CancelVerdict::Kind::kFinished);  // a repeat changes nothing
}

// The running attempt's worker is told through the cancels stream; whatever ends the attempt,
// its one outcome is `cancelled`, recorded once, never retried, no DLQ entry.
TYPED_TEST_P(LifecycleStoreEndings, ARunningAttemptIsNamedToItsWorkerAndEndsCancelledOnce) {
  const std::string id = this->backend_.deliver();
  this->start(id, this->one(), "t1");
  this->begin(id, "shop/h", "t1");
  const CancelVerdict verdict = this->cancel(id, "shop/h");
  ASSERT_EQ(verdict.invocations.size(), 1u);
  EXPECT_EQ(verdict.invocations[0].what, CancelledInvocation::What::kRunning);
  EXPECT_EQ(verdict.invocations[0].token, "t1");
  EXPECT_FALSE(verdict.acked);
  const auto told = this->backend_.cancels();
  ASSERT_EQ(told.size(), 1u);
  EXPECT_EQ(told[0], std::make_tuple(id, std::string("shop/h"), std::string("t1")));
  EXPECT_EQ(this->marker(id, "shop/h")->state, Marker::State::kRunning);  // still its worker's
  // Nothing else starts meanwhile.
  EXPECT_EQ(this->start(id, this->one(), "t2").kind, StartVerdict::Kind::kBusy);
  const CompleteVerdict ended = this->complete(id, "shop/h", "t1", this->stopped());
  EXPECT_EQ(ended.kind, CompleteVerdict::Kind::kCancelled);
  EXPECT_TRUE(ended.acked);
  // A repeat whose reply was lost: the same verdict, nothing twice.
  const CompleteVerdict again = this->complete(id, "shop/h", "t1", this->stopped());
  EXPECT_EQ(again.kind, CompleteVerdict::Kind::kCancelled);
  EXPECT_EQ(this->marker(id, "shop/h")->state, Marker::State::kCancelled);
  EXPECT_TRUE(this->backend_.dlq().empty());
  EXPECT_FALSE(this->backend_.pending(id));
}

// A cancel racing a finishing attempt: a success that ends first stands; a failure is
// `cancelled` even with attempts left (the asynq bug: a cancelled task retried).
TYPED_TEST_P(LifecycleStoreEndings, ACancelRacingTheEndOfAnAttemptHasOneOutcome) {
  const std::string succeeded = this->backend_.deliver();
  this->start(succeeded, this->one(), "t1");
  this->begin(succeeded, "shop/h", "t1");
  (void)this->cancel(succeeded);
  EXPECT_EQ(this->complete(succeeded, "shop/h", "t1", success()).kind,
            CompleteVerdict::Kind::kSucceeded);
  EXPECT_EQ(this->marker(succeeded, "shop/h")->state, Marker::State::kSucceeded);
  EXPECT_EQ(this->complete(succeeded, "shop/h", "t1", this->stopped()).kind,
            CompleteVerdict::Kind::kSucceeded);  // the late stop changes nothing

  const std::string failed = this->backend_.deliver();
  this->start(failed, this->one(5), "t1");
  this->begin(failed, "shop/h", "t1");
  (void)this->cancel(failed);
  const CompleteVerdict ended = this->complete(failed, "shop/h", "t1", failure("exit 3"));
  EXPECT_EQ(ended.kind, CompleteVerdict::Kind::kCancelled);
  EXPECT_TRUE(ended.acked);
  EXPECT_EQ(this->backend_.field(failed, "relay:reason:shop/h"),
            "cancelled (last attempt: exit 3)");
  EXPECT_FALSE(this->backend_.dueAt(failed));  // no retry
}

TYPED_TEST_P(LifecycleStoreEndings, ACancelWithDeadLetterOwesOneEntryWrittenByTheNextStart) {
  const std::string id = this->backend_.deliver();
  this->start(id, this->one(), "t1");
  this->begin(id, "shop/h", "t1");
  (void)this->complete(id, "shop/h", "t1", failure("exit 3", milliseconds(10'000)));
  const CancelVerdict verdict = this->cancel(id, "shop/*", /*dead_letter=*/true);
  EXPECT_FALSE(verdict.acked);  // its entry is owed first
  EXPECT_TRUE(this->backend_.pending(id));
  const auto m = this->marker(id, "shop/h");
  EXPECT_EQ(m->state, Marker::State::kCancelled);
  EXPECT_TRUE(m->owesDlq());
  ASSERT_TRUE(this->backend_.dueAt(id));  // due now: a poller takes it to write the entry
  EXPECT_LE(*this->backend_.dueAt(id), this->backend_.nowMs());
  const StartVerdict owes = this->start(id, this->one(), "t2");
  ASSERT_EQ(owes.kind, StartVerdict::Kind::kOwesDlq);
  ASSERT_EQ(owes.owed_states.size(), 1u);
  EXPECT_EQ(owes.owed_states[0], "cancelled");
  auto written = this->store().writeDlq(id, "shop/h", dlqFor(id, "shop", "h", 1));
  ASSERT_TRUE(written.ok());
  EXPECT_EQ(written->kind, DlqVerdict::Kind::kWritten);
  EXPECT_TRUE(written->acked);
  const auto entries = this->backend_.dlq();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].at("reason"), "cancelled (last attempt: exit 3)");
  EXPECT_EQ(this->store().writeDlq(id, "shop/h", dlqFor(id, "shop", "h", 1))->kind,
            DlqVerdict::Kind::kRetained);
  EXPECT_EQ(this->backend_.dlq().size(), 1u);
}

// A message no worker read yet keeps the request; its first start cancels what it owes.
TYPED_TEST_P(LifecycleStoreEndings, AMessageNotReadYetIsCancelledAtItsFirstStart) {
  const std::string id = this->backend_.publish();
  EXPECT_EQ(this->cancel(id).kind, CancelVerdict::Kind::kRequested);
  this->backend_.read(id);
  const StartVerdict verdict = this->start(id, this->two(), "t1");
  EXPECT_EQ(verdict.kind, StartVerdict::Kind::kDone);
  EXPECT_EQ(this->marker(id, "shop/a")->state, Marker::State::kCancelled);
  EXPECT_EQ(this->marker(id, "shop/b")->state, Marker::State::kCancelled);
  EXPECT_EQ(this->marker(id, "shop/a")->attempt, 0);
  EXPECT_EQ(this->store().acknowledge(id)->kind, AckVerdict::Kind::kAcked);
  EXPECT_TRUE(this->backend_.dlq().empty());
}

TYPED_TEST_P(LifecycleStoreEndings, ACancelOfAFinishedOrUnknownMessageChangesNothing) {
  const std::string unmatched = this->backend_.deliver();
  ASSERT_EQ(this->store().acknowledge(unmatched)->kind, AckVerdict::Kind::kAcked);
  EXPECT_EQ(this->cancel(unmatched).kind, CancelVerdict::Kind::kFinished);
  EXPECT_FALSE(this->backend_.field(unmatched, "relay:cancel:*"));  // no state left behind
  EXPECT_EQ(this->cancel("1-1").kind, CancelVerdict::Kind::kMissing);
}

// Only the named invocation is cancelled; the others run on.
TYPED_TEST_P(LifecycleStoreEndings, ACancelOfOneInvocationLeavesTheOthersToRun) {
  const std::string id = this->backend_.deliver();
  const CancelVerdict verdict = [&] {
    this->start(id, this->two(), "t1");  // a claimed
    this->begin(id, "shop/a", "t1");
    EXPECT_EQ(this->complete(id, "shop/a", "t1", success()).kind,
              CompleteVerdict::Kind::kSucceeded);
    return this->cancel(id, "shop/b");
  }();
  ASSERT_EQ(verdict.invocations.size(), 1u);
  EXPECT_EQ(verdict.invocations[0].field, "shop/b");
  EXPECT_EQ(verdict.invocations[0].what, CancelledInvocation::What::kCancelled);
  EXPECT_TRUE(verdict.acked);  // a succeeded, b cancelled: terminal

  const std::string other = this->backend_.deliver();
  this->start(other, this->two(), "t1");
  this->begin(other, "shop/a", "t1");
  (void)this->cancel(other, "shop/b");
  EXPECT_EQ(this->complete(other, "shop/a", "t1", failure("exit 3", milliseconds(0))).kind,
            CompleteVerdict::Kind::kFailed);  // a is not cancelled: retried
  EXPECT_EQ(this->marker(other, "shop/b")->state, Marker::State::kCancelled);
  const StartVerdict next = this->start(other, this->two(), "t2");
  EXPECT_EQ(next.kind, StartVerdict::Kind::kRun);
  EXPECT_EQ(next.index, 0u);
  EXPECT_EQ(next.attempt, 2);
}

TYPED_TEST_P(LifecycleStoreEndings, ACancelledPausedMessageLeavesThePausedQueue) {
  this->backend_.pause("shop");
  const std::string id = this->backend_.deliver();
  ASSERT_EQ(this->start(id, this->one(), "t1").kind, StartVerdict::Kind::kPending);
  ASSERT_TRUE(this->backend_.parkedFor("shop", id));
  EXPECT_TRUE(this->cancel(id).acked);
  EXPECT_FALSE(this->backend_.parkedFor("shop", id));
  EXPECT_FALSE(this->backend_.pending(id));
  this->backend_.resume("shop");
}

// A claim whose worker is gone cannot be told: the start that takes it over cancels it.
TYPED_TEST_P(LifecycleStoreEndings, AnOrphanedClaimIsCancelledWhenItIsTakenOver) {
  const std::string id = this->backend_.deliver();
  this->start(id, this->one(), "t1");
  this->begin(id, "shop/h", "t1");
  this->backend_.pass(milliseconds(200));  // the claim (100 ms) expired: its worker died
  const CancelVerdict verdict = this->cancel(id);
  ASSERT_EQ(verdict.invocations.size(), 1u);
  EXPECT_EQ(verdict.invocations[0].what, CancelledInvocation::What::kOrphaned);
  EXPECT_TRUE(this->backend_.cancels().empty());
  EXPECT_EQ(this->start(id, this->one(), "t2").kind, StartVerdict::Kind::kDone);
  const auto m = this->marker(id, "shop/h");
  EXPECT_EQ(m->state, Marker::State::kCancelled);
  EXPECT_EQ(m->attempt, 1);  // it ran once, its worker lost
}

// docs/apps.md "Deadlines": after the deadline no attempt starts; the invocation is
// dead-lettered with reason `deadline ...`, counted from the message's publication.
TYPED_TEST_P(LifecycleStoreEndings, NoAttemptStartsAfterTheDeadlineAndTheEntrySaysDeadline) {
  const Plan plan = this->withLimits(milliseconds(300), milliseconds(0));
  const std::string id = this->backend_.deliver();
  this->start(id, plan, "t1");
  this->begin(id, "shop/h", "t1");
  (void)this->complete(id, "shop/h", "t1", failure("exit 3", milliseconds(100)));
  this->backend_.pass(milliseconds(400));
  const StartVerdict owes = this->start(id, plan, "t2");
  ASSERT_EQ(owes.kind, StartVerdict::Kind::kOwesDlq);
  ASSERT_EQ(owes.owed.size(), 1u);
  EXPECT_EQ(owes.owed[0].second, 1);  // attempts that ran
  EXPECT_EQ(owes.owed_states[0], "expired");
  const auto m = this->marker(id, "shop/h");
  EXPECT_EQ(m->state, Marker::State::kExpired);
  EXPECT_EQ(this->backend_.field(id, "relay:reason:shop/h"),
            "deadline 300ms (last attempt: exit 3)");
  auto written = this->store().writeDlq(id, "shop/h", dlqFor(id, "shop", "h", 1));
  ASSERT_TRUE(written.ok());
  EXPECT_TRUE(written->acked);
  const auto entries = this->backend_.dlq();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].at("reason"), "deadline 300ms (last attempt: exit 3)");
}

// A retry due after the deadline does not wait for its backoff: the message is due at the
// deadline, when it is dead-lettered.
TYPED_TEST_P(LifecycleStoreEndings, ARetryDueAfterTheDeadlineIsDueAtTheDeadline) {
  const Plan plan = this->withLimits(milliseconds(500), milliseconds(0));
  const std::string id = this->backend_.deliver();
  const std::int64_t born = std::stoll(id.substr(0, id.find('-')));
  this->start(id, plan, "t1");
  this->begin(id, "shop/h", "t1");
  (void)this->complete(id, "shop/h", "t1", failure("exit 3", milliseconds(60'000)));
  const StartVerdict parked = this->start(id, plan, "t2");
  ASSERT_EQ(parked.kind, StartVerdict::Kind::kPending);
  EXPECT_EQ(parked.until, born + 500);
  EXPECT_EQ(this->backend_.dueAt(id), born + 500);
}

// start_timeout: the longest wait before the first attempt; a retry is not held to it.
TYPED_TEST_P(LifecycleStoreEndings, AStartTimeoutEndsAFirstAttemptThatWaitedTooLongButNoRetry) {
  const Plan plan = this->withLimits(milliseconds(0), milliseconds(200));
  const std::string waited = this->backend_.deliver();
  const std::int64_t born = std::stoll(waited.substr(0, waited.find('-')));
  const StartVerdict parked = this->start(waited, plan, "t1", {false});  // no worker can run it
  ASSERT_EQ(parked.kind, StartVerdict::Kind::kPending);
  EXPECT_EQ(parked.until, born + 200);  // before the 300 ms of retry_elsewhere
  this->backend_.pass(milliseconds(250));
  const StartVerdict owes = this->start(waited, plan, "t2");
  ASSERT_EQ(owes.kind, StartVerdict::Kind::kOwesDlq);
  EXPECT_EQ(owes.owed[0].second, 0);
  EXPECT_EQ(this->backend_.field(waited, "relay:reason:shop/h"), "start_timeout 200ms");

  const std::string retried = this->backend_.deliver();
  this->start(retried, plan, "t1");
  this->begin(retried, "shop/h", "t1");
  (void)this->complete(retried, "shop/h", "t1", failure("exit 3", milliseconds(0)));
  this->backend_.pass(milliseconds(250));
  const StartVerdict second = this->start(retried, plan, "t2");
  EXPECT_EQ(second.kind, StartVerdict::Kind::kRun);
  EXPECT_EQ(second.attempt, 2);
}

// The limits are recorded with the plan: a later classification cannot change them, and a
// replan answers with them.
TYPED_TEST_P(LifecycleStoreEndings, TheRecordedLimitsComeBackWithTheRecordedPlan) {
  Plan plan = this->withLimits(milliseconds(3'600'000), milliseconds(300'000));
  plan.invocations[0].trigger = runtime::Trigger::kReplay;
  const std::string id = this->backend_.deliver();
  this->start(id, plan, "t1");
  EXPECT_EQ(this->backend_.field(id, "relay:limits"), "3600000 300000 shop/h\n");
  const StartVerdict replan = this->start(id, this->two(), "t2");
  ASSERT_EQ(replan.kind, StartVerdict::Kind::kReplan);
  EXPECT_EQ(replan.plan, plan);  // the trigger and both limits
}

REGISTER_TYPED_TEST_SUITE_P(LifecycleStoreEndings,
                            ACancelledInvocationWaitingForARetryIsTerminalAndAcked,
                            ARunningAttemptIsNamedToItsWorkerAndEndsCancelledOnce,
                            ACancelRacingTheEndOfAnAttemptHasOneOutcome,
                            ACancelWithDeadLetterOwesOneEntryWrittenByTheNextStart,
                            AMessageNotReadYetIsCancelledAtItsFirstStart,
                            ACancelOfAFinishedOrUnknownMessageChangesNothing,
                            ACancelOfOneInvocationLeavesTheOthersToRun,
                            ACancelledPausedMessageLeavesThePausedQueue,
                            AnOrphanedClaimIsCancelledWhenItIsTakenOver,
                            NoAttemptStartsAfterTheDeadlineAndTheEntrySaysDeadline,
                            ARetryDueAfterTheDeadlineIsDueAtTheDeadline,
                            AStartTimeoutEndsAFirstAttemptThatWaitedTooLongButNoRetry,
                            TheRecordedLimitsComeBackWithTheRecordedPlan);

}  // namespace relay::invocation::contract
