#pragma once
// The LifecycleStore contract (docs/pipeline.md "State in Redis", "Scripts"): one suite that
// runs unchanged against the in-memory store (unit) and RedisLifecycleStore over a real
// redis-server (integration). A Backend gives the store, a way to deliver a message into the
// PEL, a way to let the store's clock pass, and read access to what the store holds.
//
//   struct Backend {
//     invocation::LifecycleStore& store();
//     std::string deliver();                          // a new message id, pending
//     void pass(std::chrono::milliseconds);           // the store's clock moves on
//     bool pending(const std::string& id);
//     std::optional<std::string> field(const std::string& id, const std::string& name);
//     std::optional<std::chrono::milliseconds> ttl(const std::string& id);
//     std::vector<std::map<std::string, std::string>> dlq();
//     std::optional<std::int64_t> dueAt(const std::string& id);
//     std::int64_t nowMs();                           // the store's clock
//     std::vector<invocation::AttemptRecord> attempts(const std::string& id);  // the journal
//     void breakJournal(const std::string& id);  // later journal writes of `id` fail
//     void takeBack(const std::string& id);      // XCLAIM ... JUSTID to "w1" (a poller's take)
//     std::string owner(const std::string& id);  // its consumer in the PEL ("": not pending)
//     void pause(const std::string& app);        // relay app pause / resume
//     void resume(const std::string& app);
//     bool parkedFor(const std::string& app, const std::string& id);  // in the paused queue
//     void redeliver(const std::string& id);     // delivered again (a group re-created at 0)
//   };
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "invocation/keys.h"
#include "invocation/lifecycle_store.h"
#include "invocation/marker.h"

namespace relay::invocation::contract {

using std::chrono::milliseconds;

inline PlannedInvocation planned(const std::string& app, const std::string& handler,
                                 int max_attempts = 3) {
  PlannedInvocation invocation;
  invocation.app = app;
  invocation.handler = handler;
  invocation.max_attempts = max_attempts;
  invocation.timeout = milliseconds(100);
  return invocation;
}

/// Short claims so a test can let them expire: 100 ms timeout + 0 grace, lease 150 ms, no margin;
/// expired claims may be taken over at once (no outage grace: a test of outages sets one).
inline ClaimTimes shortClaims() {
  return ClaimTimes{milliseconds(0), milliseconds(150), milliseconds(0), milliseconds(3'600'000),
                    milliseconds(0)};
}

/// The runnability of each planned invocation from flags: runnable here (with a slot) or not.
inline std::vector<Runnability> flags(std::vector<bool> runnable) {
  std::vector<Runnability> out;
  for (bool flag : runnable) out.push_back(flag ? Runnability::kReady : Runnability::kNotHere);
  return out;
}

inline DlqEntry dlqFor(const std::string& id, const std::string& app, const std::string& handler,
                       int attempts) {
  DlqEntry entry;
  entry.original_stream = "events";
  entry.original_id = id;
  entry.group = "relay";
  entry.consumer = "w1";
  entry.event = R"({"kind":"order"})";
  entry.reason = "exit 3";
  entry.kind = app == "-" ? DlqKind::kMalformed : DlqKind::kHandler;
  entry.app = app;
  entry.handler = handler;
  entry.handler_attempts = attempts;
  entry.timestamp = "2026-12-01T00:00:00.000Z";
  return entry;
}

inline AttemptResult failure(std::string reason = "exit 3",
                             milliseconds retry = milliseconds(150)) {
  AttemptResult result;
  result.succeeded = false;
  result.exit_reason = std::move(reason);
  result.output_tail = "[shop/h] boom";
  result.retry_delay = retry;
  return result;
}

inline AttemptResult success() {
  AttemptResult result;
  result.succeeded = true;
  return result;
}

/// What a worker gives start() for the journal: who claims, when (its own clock).
inline AttemptRecord startedBy(const std::string& consumer, std::int64_t started_ms) {
  AttemptRecord record;
  record.consumer = consumer;
  record.started_ms = started_ms;
  return record;
}

/// The journal record of a finished attempt of shop/h.
inline AttemptRecord finishedH(int attempt, std::string outcome, std::int64_t finished_ms) {
  AttemptRecord record = startedBy("host-1", finished_ms - 2'000);
  record.app = "shop";
  record.handler = "h";
  record.attempt = attempt;
  record.finished_ms = finished_ms;
  record.outcome = std::move(outcome);
  record.reason = record.outcome == "failed" ? "exit 3" : "";
  record.duration_ms = 2'000;
  return record;
}

/// What worker w1 asks of start(): a backoff of 150 ms after a lost attempt, 300 ms before an
/// invocation it cannot run is due again; every invocation runnable unless `runnable` says.
inline StartRequest startRequest(const Plan& plan, std::vector<bool> runnable,
                                 const std::string& token, const AttemptRecord* started = nullptr,
                                 const std::string& consumer = "w1") {
  if (runnable.empty()) runnable.assign(plan.invocations.size(), true);
  StartRequest request;
  request.candidate = plan;
  request.runnable = flags(std::move(runnable));
  request.token = token;
  request.consumer = consumer;
  request.times = shortClaims();
  if (started) request.started = *started;
  request.backoff.delays = {milliseconds(150)};
  request.retry_elsewhere = milliseconds(300);
  return request;
}

template <typename Backend>
class LifecycleStoreContract : public ::testing::Test {
 protected:
  Backend backend_;
  LifecycleStore& store() { return backend_.store(); }

  static StartRequest request(const Plan& plan, std::vector<bool> runnable,
                              const std::string& token, const AttemptRecord* started = nullptr,
                              const std::string& consumer = "w1") {
    return startRequest(plan, std::move(runnable), token, started, consumer);
  }
  /// start() as worker w1 after taking the message back (as a poller does once it is due).
  StartVerdict start(const std::string& id, const Plan& plan, const std::string& token,
                     std::vector<bool> runnable = {}) {
    backend_.takeBack(id);
    auto verdict = store().start(id, request(plan, std::move(runnable), token));
    EXPECT_TRUE(verdict.ok()) << verdict.error().message;
    return verdict.ok() ? *verdict : StartVerdict{};
  }
  /// The claimed handler started: its claim counts from now on.
  void begin(const std::string& id, const std::string& field, const std::string& token) {
    auto begun = store().begin(id, field, token);
    ASSERT_TRUE(begun.ok()) << begun.error().message;
    EXPECT_EQ(*begun, BeginVerdict::kRunning);
  }
  CompleteVerdict complete(const std::string& id, const std::string& field,
                           const std::string& token, const AttemptResult& result,
                           const DlqEntry* dlq = nullptr) {
    auto verdict = store().complete(id, field, token, result, dlq);
    EXPECT_TRUE(verdict.ok()) << verdict.error().message;
    return verdict.ok() ? *verdict : CompleteVerdict{};
  }
  std::optional<Marker> marker(const std::string& id, const std::string& field) {
    auto text = backend_.field(id, field);
    return text ? Marker::parse(*text) : std::nullopt;
  }
  static Plan one(int max_attempts = 3) { return Plan{{planned("shop", "h", max_attempts)}}; }
  static Plan two() { return Plan{{planned("shop", "a"), planned("shop", "b")}}; }
};

TYPED_TEST_SUITE_P(LifecycleStoreContract);

TYPED_TEST_P(LifecycleStoreContract, FirstStartRecordsThePlanAndClaimsAttemptOne) {
  const std::string id = this->backend_.deliver();
  const StartVerdict verdict = this->start(id, this->one(), "t1");
  EXPECT_EQ(verdict.kind, StartVerdict::Kind::kRun);
  EXPECT_EQ(verdict.index, 0u);
  EXPECT_EQ(verdict.attempt, 1);
  EXPECT_EQ(this->backend_.field(id, std::string(kPlanField)), encodePlan(this->one()));
  const auto claimed = this->marker(id, "shop/h");
  ASSERT_TRUE(claimed);
  EXPECT_EQ(claimed->state, Marker::State::kClaimed);  // not charged until its handler begins
  EXPECT_EQ(claimed->token, "t1");
  // Deadline from the store's clock: timeout (100) + grace (0), capped by the lease (150).
  EXPECT_NEAR(static_cast<double>(claimed->deadline_ms - this->backend_.nowMs()), 100, 50);
  this->begin(id, "shop/h", "t1");
  const auto running = this->marker(id, "shop/h");
  EXPECT_EQ(running->state, Marker::State::kRunning);
  EXPECT_EQ(running->deadline_ms, claimed->deadline_ms);
  this->begin(id, "shop/h", "t1");  // a repeat changes nothing
  EXPECT_EQ(*this->store().begin(id, "shop/h", "other"), BeginVerdict::kLost);
}

TYPED_TEST_P(LifecycleStoreContract, RecordedPlanWinsOverALaterClassification) {
  const std::string id = this->backend_.deliver();
  this->start(id, this->one(), "t1");
  const StartVerdict verdict = this->start(id, this->two(), "t2");
  EXPECT_EQ(verdict.kind, StartVerdict::Kind::kReplan);
  EXPECT_EQ(verdict.plan, this->one());
  EXPECT_EQ(this->backend_.field(id, std::string(kPlanField)), encodePlan(this->one()));
}

TYPED_TEST_P(LifecycleStoreContract, RepeatedStartWithTheSameTokenReturnsTheSameClaim) {
  const std::string id = this->backend_.deliver();
  this->start(id, this->one(), "t1");
  const StartVerdict again = this->start(id, this->one(), "t1");
  EXPECT_EQ(again.kind, StartVerdict::Kind::kRun);
  EXPECT_EQ(again.attempt, 1);
  EXPECT_EQ(this->marker(id, "shop/h")->attempt, 1);
}

TYPED_TEST_P(LifecycleStoreContract, LiveClaimOnAnyInvocationMakesTheMessageBusy) {
  const std::string id = this->backend_.deliver();
  ASSERT_EQ(this->start(id, this->two(), "t1").index, 0u);
  // Another worker may not run the next invocation while the first runs: one at a time.
  const StartVerdict other = this->start(id, this->two(), "t2");
  EXPECT_EQ(other.kind, StartVerdict::Kind::kBusy);
  EXPECT_FALSE(this->marker(id, "shop/b"));
}

TYPED_TEST_P(LifecycleStoreContract, FailedAttemptWaitsForItsBackoffOnTheStoresClock) {
  const std::string id = this->backend_.deliver();
  this->start(id, this->one(), "t1");
  const CompleteVerdict failed = this->complete(id, "shop/h", "t1", failure());
  EXPECT_EQ(failed.kind, CompleteVerdict::Kind::kFailed);
  EXPECT_FALSE(failed.acked);
  const auto marker = this->marker(id, "shop/h");
  ASSERT_TRUE(marker);
  EXPECT_EQ(marker->state, Marker::State::kFailed);
  EXPECT_EQ(marker->token, "t1");
  EXPECT_EQ(this->backend_.dueAt(id), marker->next_attempt_ms);  // the due-retry index
  EXPECT_EQ(this->start(id, this->one(), "t2").kind, StartVerdict::Kind::kPending);
  this->backend_.pass(milliseconds(200));
  const StartVerdict retry = this->start(id, this->one(), "t3");
  EXPECT_EQ(retry.kind, StartVerdict::Kind::kRun);
  EXPECT_EQ(retry.attempt, 2);
  EXPECT_FALSE(this->backend_.dueAt(id));  // running: nothing due
}

// The due index follows the retry of one invocation through the other's claim and the start that
// marks the other exhausted (docs/pipeline.md "State in Redis").
TYPED_TEST_P(LifecycleStoreContract, DueIndexKeepsTheRetryOfOneInvocationWhileAnotherMoves) {
  const Plan plan{{planned("shop", "a", 1), planned("shop", "b")}};
  const std::string id = this->backend_.deliver();
  ASSERT_EQ(this->start(id, plan, "t1", {false, true}).index, 1u);
  this->complete(id, "shop/b", "t1", failure("exit 3", milliseconds(60'000)));
  const std::int64_t retry_b = this->marker(id, "shop/b")->next_attempt_ms;
  EXPECT_EQ(this->backend_.dueAt(id), retry_b);
  const StartVerdict a = this->start(id, plan, "t2");
  EXPECT_EQ(a.kind, StartVerdict::Kind::kRun);
  EXPECT_EQ(a.index, 0u);
  EXPECT_EQ(this->backend_.dueAt(id), retry_b);  // a's claim leaves b's retry indexed
  this->begin(id, "shop/a", "t2");
  this->backend_.pass(milliseconds(200));  // a's worker died on its only attempt
  const StartVerdict later = this->start(id, plan, "t3");
  EXPECT_EQ(later.kind, StartVerdict::Kind::kPending);
  EXPECT_EQ(this->marker(id, "shop/a")->state, Marker::State::kExhausted);
  EXPECT_EQ(this->backend_.dueAt(id), retry_b);  // the start that exhausted a kept it
  EXPECT_TRUE(this->backend_.pending(id));
}

// Whichever invocation resolves last acknowledges, after the others' own completions did not.
TYPED_TEST_P(LifecycleStoreContract, LastInvocationToResolveAcknowledgesWhicheverItIs) {
  const std::string id = this->backend_.deliver();
  this->start(id, this->two(), "t1");
  EXPECT_FALSE(this->complete(id, "shop/a", "t1", failure()).acked);
  const std::int64_t retry_a = this->marker(id, "shop/a")->next_attempt_ms;
  ASSERT_EQ(this->start(id, this->two(), "t2").index, 1u);
  const CompleteVerdict b = this->complete(id, "shop/b", "t2", success());
  EXPECT_FALSE(b.acked);  // a still owes a retry
  EXPECT_EQ(this->backend_.dueAt(id), retry_a);
  EXPECT_FALSE(this->backend_.field(id, std::string(kRetainedField)));
  this->backend_.pass(milliseconds(200));
  const StartVerdict again = this->start(id, this->two(), "t3");
  ASSERT_EQ(again.index, 0u);
  EXPECT_EQ(again.attempt, 2);
  const CompleteVerdict a = this->complete(id, "shop/a", "t3", success());
  EXPECT_EQ(a.kind, CompleteVerdict::Kind::kSucceeded);
  EXPECT_TRUE(a.acked);
  EXPECT_FALSE(this->backend_.pending(id));
  EXPECT_FALSE(this->backend_.dueAt(id));
  EXPECT_EQ(this->backend_.field(id, std::string(kRetainedField)), "1");
  EXPECT_EQ(this->marker(id, "shop/b")->state, Marker::State::kSucceeded);
}

TYPED_TEST_P(LifecycleStoreContract, LastCompletionAcknowledgesAndRetainsInOneStep) {
  const std::string id = this->backend_.deliver();
  this->start(id, this->one(), "t1");
  EXPECT_FALSE(this->backend_.ttl(id));  // pending: no TTL however long
  const CompleteVerdict done = this->complete(id, "shop/h", "t1", success());
  EXPECT_EQ(done.kind, CompleteVerdict::Kind::kSucceeded);
  EXPECT_TRUE(done.acked);
  EXPECT_FALSE(this->backend_.pending(id));
  EXPECT_EQ(this->backend_.field(id, std::string(kRetainedField)), "1");
  ASSERT_TRUE(this->backend_.ttl(id));
  EXPECT_GT(this->backend_.ttl(id)->count(), 0);
}

TYPED_TEST_P(LifecycleStoreContract, AckIsRefusedWhileAPlannedInvocationIsNotTerminal) {
  const std::string id = this->backend_.deliver();
  this->start(id, this->two(), "t1");
  const CompleteVerdict first = this->complete(id, "shop/a", "t1", success());
  EXPECT_FALSE(first.acked);
  auto acked = this->store().acknowledge(id);
  ASSERT_TRUE(acked.ok());
  EXPECT_EQ(acked->kind, AckVerdict::Kind::kUnresolved);
  EXPECT_EQ(acked->plan, this->two());
  EXPECT_TRUE(this->backend_.pending(id));
  EXPECT_FALSE(this->backend_.field(id, std::string(kRetainedField)));
}

TYPED_TEST_P(LifecycleStoreContract, UnrunnableInvocationIsSkippedAndTheNextOneRuns) {
  const std::string id = this->backend_.deliver();
  const StartVerdict verdict = this->start(id, this->two(), "t1", {false, true});
  EXPECT_EQ(verdict.kind, StartVerdict::Kind::kRun);
  EXPECT_EQ(verdict.index, 1u);
  this->complete(id, "shop/b", "t1", success());
  EXPECT_EQ(this->start(id, this->two(), "t2", {false, true}).kind, StartVerdict::Kind::kPending);
  EXPECT_FALSE(this->marker(id, "shop/a"));  // nothing charged
  EXPECT_TRUE(this->backend_.pending(id));
}

TYPED_TEST_P(LifecycleStoreContract, LastFailedAttemptWritesItsDlqEntryAndAcksAtomically) {
  const std::string id = this->backend_.deliver();
  this->start(id, this->one(1), "t1");
  const DlqEntry entry = [&] {
    DlqEntry e = dlqFor(id, "shop", "h", 1);
    e.exit_reason = "exit 3";
    e.output_tail = "[shop/h] boom";
    return e;
  }();
  const CompleteVerdict verdict = this->complete(id, "shop/h", "t1", failure(), &entry);
  EXPECT_EQ(verdict.kind, CompleteVerdict::Kind::kExhausted);
  EXPECT_TRUE(verdict.dlq_written);
  EXPECT_TRUE(verdict.acked);
  EXPECT_EQ(this->backend_.field(id, "shop/h"), "exhausted:1:t1:dlq");
  const auto dlq = this->backend_.dlq();
  ASSERT_EQ(dlq.size(), 1u);
  EXPECT_EQ(dlq[0].at("handler_attempts"), "1");
  EXPECT_EQ(dlq[0].at("kind"), "handler");
  EXPECT_EQ(dlq[0].at("deliveries"), "1");  // from the PEL, by the store
  EXPECT_EQ(dlq[0].at("exit_reason"), "exit 3");
  EXPECT_EQ(dlq[0].at("output_tail"), "[shop/h] boom");
  EXPECT_FALSE(this->backend_.pending(id));
}

TYPED_TEST_P(LifecycleStoreContract, RepeatedCompleteReturnsTheSameVerdictAndChangesNothingTwice) {
  const std::string id = this->backend_.deliver();
  this->start(id, this->one(1), "t1");
  const DlqEntry entry = dlqFor(id, "shop", "h", 1);
  const CompleteVerdict first = this->complete(id, "shop/h", "t1", failure(), &entry);
  const CompleteVerdict again = this->complete(id, "shop/h", "t1", failure(), &entry);
  EXPECT_EQ(again.kind, first.kind);
  EXPECT_EQ(again.dlq_written, first.dlq_written);
  EXPECT_EQ(again.acked, first.acked);
  EXPECT_EQ(this->backend_.dlq().size(), 1u);
  // The same for a failure that is retried later, and for a success.
  const std::string other = this->backend_.deliver();
  this->start(other, this->one(), "u1");
  EXPECT_EQ(this->complete(other, "shop/h", "u1", failure()).kind, CompleteVerdict::Kind::kFailed);
  const auto before = this->backend_.field(other, "shop/h");
  EXPECT_EQ(this->complete(other, "shop/h", "u1", failure()).kind, CompleteVerdict::Kind::kFailed);
  EXPECT_EQ(this->backend_.field(other, "shop/h"), before);
}

TYPED_TEST_P(LifecycleStoreContract, StaleTokenChangesNothing) {
  const std::string id = this->backend_.deliver();
  this->start(id, this->one(), "t1");
  EXPECT_EQ(this->complete(id, "shop/h", "other", success()).kind, CompleteVerdict::Kind::kStale);
  EXPECT_EQ(this->marker(id, "shop/h")->state, Marker::State::kClaimed);
}

TYPED_TEST_P(LifecycleStoreContract, ReleaseGivesTheAttemptBackUncharged) {
  const std::string id = this->backend_.deliver();
  this->start(id, this->one(), "t1");
  auto released = this->store().release(id, "shop/h", "t1", milliseconds(100));
  ASSERT_TRUE(released.ok());
  EXPECT_EQ(*released, ReleaseVerdict::kReleased);
  EXPECT_EQ(this->marker(id, "shop/h")->attempt, 0);
  EXPECT_EQ(*this->store().release(id, "shop/h", "t1", milliseconds(100)),
            ReleaseVerdict::kNotHeld);
  EXPECT_EQ(this->start(id, this->one(), "t2").kind, StartVerdict::Kind::kPending);
  this->backend_.pass(milliseconds(150));
  const StartVerdict again = this->start(id, this->one(), "t3");
  EXPECT_EQ(again.kind, StartVerdict::Kind::kRun);
  EXPECT_EQ(again.attempt, 1);  // the released attempt was not counted
}

TYPED_TEST_P(LifecycleStoreContract, ReleaseWithoutAFieldFindsTheTokensClaim) {
  const std::string id = this->backend_.deliver();
  this->start(id, this->two(), "t1", {false, true});
  auto released = this->store().release(id, "", "t1", milliseconds(100));
  ASSERT_TRUE(released.ok());
  EXPECT_EQ(*released, ReleaseVerdict::kReleased);
  EXPECT_EQ(this->marker(id, "shop/b")->state, Marker::State::kFailed);
  EXPECT_EQ(this->marker(id, "shop/b")->attempt, 0);
}

// docs/pipeline.md "Claims": a started attempt whose worker died counts, and the next one waits
// for the backoff like after any failure, with the loss as its reason.
TYPED_TEST_P(LifecycleStoreContract, ExpiredStartedClaimCountsAsAnAttemptThatRanThenBacksOff) {
  const std::string id = this->backend_.deliver();
  this->start(id, this->one(), "t1");
  this->begin(id, "shop/h", "t1");
  this->backend_.pass(milliseconds(200));  // the worker died mid-handler
  const StartVerdict waits = this->start(id, this->one(), "t2");
  EXPECT_EQ(waits.kind, StartVerdict::Kind::kPending);
  const auto lost = this->marker(id, "shop/h");
  ASSERT_TRUE(lost);
  EXPECT_EQ(lost->state, Marker::State::kFailed);
  EXPECT_EQ(lost->attempt, 1);
  EXPECT_NEAR(static_cast<double>(lost->next_attempt_ms - this->backend_.nowMs()), 150, 60);
  EXPECT_EQ(this->backend_.field(id, std::string(kReasonPrefix) + "shop/h"),
            "worker lost during attempt 1");
  this->backend_.pass(milliseconds(200));
  const StartVerdict next = this->start(id, this->one(), "t3");
  EXPECT_EQ(next.kind, StartVerdict::Kind::kRun);
  EXPECT_EQ(next.attempt, 2);
}

// docs/pipeline.md "Claims": a claim whose handler never started charges nothing when its worker
// dies (waiting for a slot, preparing the runtime, a kill -9 before the start).
TYPED_TEST_P(LifecycleStoreContract, ExpiredUnstartedClaimChargesNothingAndIsDueAtOnce) {
  const std::string id = this->backend_.deliver();
  this->start(id, this->one(1), "t1");
  this->backend_.pass(milliseconds(200));  // killed before its handler started
  const StartVerdict next = this->start(id, this->one(1), "t2");
  EXPECT_EQ(next.kind, StartVerdict::Kind::kRun);
  EXPECT_EQ(next.attempt, 1);  // retries: 0 and still its first attempt: nothing dead-lettered
  EXPECT_TRUE(this->backend_.dlq().empty());
}

TYPED_TEST_P(LifecycleStoreContract, ExpiredLastAttemptOwesOneDlqEntryWrittenOnce) {
  const std::string id = this->backend_.deliver();
  this->start(id, this->one(1), "t1");
  this->begin(id, "shop/h", "t1");
  this->backend_.pass(milliseconds(200));
  const StartVerdict owes = this->start(id, this->one(1), "t2");
  ASSERT_EQ(owes.kind, StartVerdict::Kind::kOwesDlq);
  ASSERT_EQ(owes.owed.size(), 1u);
  EXPECT_EQ(owes.owed[0], (std::pair<std::size_t, int>{0, 1}));
  auto written = this->store().writeDlq(id, "shop/h", dlqFor(id, "shop", "h", 1));
  ASSERT_TRUE(written.ok());
  EXPECT_EQ(written->kind, DlqVerdict::Kind::kWritten);
  EXPECT_TRUE(written->acked);
  auto again = this->store().writeDlq(id, "shop/h", dlqFor(id, "shop", "h", 1));
  EXPECT_EQ(again->kind, DlqVerdict::Kind::kRetained);
  ASSERT_EQ(this->backend_.dlq().size(), 1u);
  // The entry says how the last attempt ended: its worker was lost (not an earlier reason).
  EXPECT_EQ(this->backend_.dlq()[0].at("reason"), "worker lost during attempt 1");
}

TYPED_TEST_P(LifecycleStoreContract, RetainedStateIsInertForEveryVerb) {
  const std::string id = this->backend_.deliver();
  this->start(id, this->one(), "t1");
  this->complete(id, "shop/h", "t1", success());
  const auto before = this->backend_.field(id, "shop/h");
  const auto ttl = this->backend_.ttl(id);
  EXPECT_EQ(this->start(id, this->one(), "t2").kind, StartVerdict::Kind::kRetained);
  EXPECT_EQ(this->complete(id, "shop/h", "t2", failure()).kind, CompleteVerdict::Kind::kRetained);
  EXPECT_EQ(*this->store().release(id, "shop/h", "t2", milliseconds(1)), ReleaseVerdict::kRetained);
  EXPECT_EQ(*this->store().renew(id, "shop/h", "t2", milliseconds(1)), RenewVerdict::kRetained);
  EXPECT_EQ(this->store().acknowledge(id)->kind, AckVerdict::Kind::kRetained);
  EXPECT_EQ(this->backend_.field(id, "shop/h"), before);
  EXPECT_TRUE(this->backend_.ttl(id));
  EXPECT_LE(this->backend_.ttl(id)->count(), ttl->count());
}

TYPED_TEST_P(LifecycleStoreContract, UnrunnableMessageGetsOneDlqEntryAndItsAckInOneStep) {
  const std::string id = this->backend_.deliver();
  DlqEntry entry = dlqFor(id, "-", "-", 0);
  entry.reason = "malformed: not a JSON object";
  auto written = this->store().writeDlq(id, kMalformedField, entry);
  ASSERT_TRUE(written.ok());
  EXPECT_EQ(written->kind, DlqVerdict::Kind::kWritten);
  EXPECT_TRUE(written->acked);
  EXPECT_FALSE(this->backend_.pending(id));
  EXPECT_EQ(this->store().writeDlq(id, kMalformedField, entry)->kind, DlqVerdict::Kind::kRetained);
  EXPECT_EQ(this->backend_.dlq().size(), 1u);
}

TYPED_TEST_P(LifecycleStoreContract, UnrunnableVerdictDefersToARecordedPlan) {
  const std::string id = this->backend_.deliver();
  this->start(id, this->one(), "t1");
  auto written = this->store().writeDlq(id, kMalformedField, dlqFor(id, "-", "-", 0));
  ASSERT_TRUE(written.ok());
  EXPECT_EQ(written->kind, DlqVerdict::Kind::kPlanned);
  EXPECT_EQ(written->plan, this->one());
  EXPECT_TRUE(this->backend_.dlq().empty());
}

TYPED_TEST_P(LifecycleStoreContract, UnplannedAckLeavesNoState) {
  const std::string id = this->backend_.deliver();
  auto acked = this->store().acknowledge(id);
  ASSERT_TRUE(acked.ok());
  EXPECT_EQ(acked->kind, AckVerdict::Kind::kAcked);
  EXPECT_FALSE(this->backend_.pending(id));
  EXPECT_FALSE(this->backend_.field(id, std::string(kRetainedField)));
}

TYPED_TEST_P(LifecycleStoreContract, ClearedMissingPayloadIsRetainedAndThenInert) {
  const std::string id = this->backend_.deliver();
  this->start(id, this->one(), "t1");
  this->complete(id, "shop/h", "t1", failure());
  ASSERT_TRUE(this->store().clearMissing(id).ok());
  EXPECT_FALSE(this->backend_.pending(id));
  EXPECT_EQ(this->backend_.field(id, std::string(kRetainedField)), "1");
  EXPECT_TRUE(this->backend_.ttl(id));
  EXPECT_FALSE(this->backend_.dueAt(id));
  const auto before = this->backend_.field(id, "shop/h");
  ASSERT_TRUE(this->store().clearMissing(id).ok());
  EXPECT_EQ(this->backend_.field(id, "shop/h"), before);
}

TYPED_TEST_P(LifecycleStoreContract, RenewalKeepsALiveClaimPastItsFirstDeadline) {
  const std::string id = this->backend_.deliver();
  this->start(id, this->one(), "t1");
  auto renewed = this->store().renew(id, "shop/h", "t1", milliseconds(2'000));
  ASSERT_TRUE(renewed.ok());
  EXPECT_EQ(*renewed, RenewVerdict::kRenewed);
  this->backend_.pass(milliseconds(200));  // past the first deadline
  EXPECT_EQ(this->start(id, this->one(), "t2").kind, StartVerdict::Kind::kBusy);
  EXPECT_EQ(*this->store().renew(id, "shop/h", "nobody", milliseconds(1)), RenewVerdict::kLost);
}

TYPED_TEST_P(LifecycleStoreContract, FailingInvocationDoesNotStopTheNextOne) {
  const std::string id = this->backend_.deliver();
  this->start(id, this->two(), "t1");
  this->complete(id, "shop/a", "t1", failure());
  const StartVerdict next = this->start(id, this->two(), "t2");
  EXPECT_EQ(next.kind, StartVerdict::Kind::kRun);
  EXPECT_EQ(next.index, 1u);
}

TYPED_TEST_P(LifecycleStoreContract, JournalKeepsOneRecordPerAttemptTheEndReplacingTheStart) {
  const std::string id = this->backend_.deliver();
  AttemptRecord first;
  first.app = "shop";
  first.handler = "bin/pay.sh";
  first.attempt = 1;
  first.consumer = "host-1";
  first.started_ms = 1'000;
  ASSERT_TRUE(this->store().journal(id, first).ok());
  first.finished_ms = 3'000;
  first.outcome = "failed";
  first.reason = "exit 3";
  first.duration_ms = 2'000;
  ASSERT_TRUE(this->store().journal(id, first).ok());
  AttemptRecord second = first;
  second.attempt = 2;
  second.consumer = "host-2";
  second.started_ms = 9'000;
  second.finished_ms = 0;
  second.outcome.clear();
  second.reason.clear();
  second.duration_ms = 0;
  ASSERT_TRUE(this->store().journal(id, second).ok());
  const std::vector<AttemptRecord> records = this->backend_.attempts(id);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].attempt, 1);
  EXPECT_EQ(records[0].consumer, "host-1");
  EXPECT_EQ(records[0].outcome, "failed");
  EXPECT_EQ(records[0].reason, "exit 3");
  EXPECT_EQ(records[0].finished_ms - records[0].started_ms, 2'000);
  EXPECT_EQ(records[1].consumer, "host-2");
  EXPECT_EQ(records[1].finished_ms, 0);  // still running
  EXPECT_EQ(records[1].outcome, "");
  // A record next to the state, never in its place.
  EXPECT_FALSE(this->backend_.field(id, "shop/bin/pay.sh").has_value());
}

// docs/pipeline.md "State in Redis": the claim keeps its attempt's journal record in the same
// step (no journal call of its own), and only a new claim does.
TYPED_TEST_P(LifecycleStoreContract, ClaimKeepsItsAttemptsJournalRecordInTheSameStep) {
  const std::string id = this->backend_.deliver();
  const AttemptRecord started = startedBy("host-1", 1'000);
  auto claimed = this->store().start(id, this->request(this->two(), {false, true}, "t1", &started));
  ASSERT_TRUE(claimed.ok()) << claimed.error().message;
  EXPECT_EQ(claimed->kind, StartVerdict::Kind::kRun);
  EXPECT_FALSE(claimed->journal_failed);
  std::vector<AttemptRecord> records = this->backend_.attempts(id);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].app, "shop");
  EXPECT_EQ(records[0].handler, "b");  // the claimed invocation, not the first of the plan
  EXPECT_EQ(records[0].attempt, 1);
  EXPECT_EQ(records[0].consumer, "host-1");
  EXPECT_EQ(records[0].started_ms, 1'000);
  EXPECT_EQ(records[0].finished_ms, 0);  // running
  EXPECT_EQ(records[0].outcome, "");
  // No claim, no record: another worker finds the message busy.
  const AttemptRecord other = startedBy("host-2", 2'000);
  auto busy = this->store().start(id, this->request(this->two(), {true, true}, "t2", &other));
  ASSERT_TRUE(busy.ok());
  EXPECT_EQ(busy->kind, StartVerdict::Kind::kBusy);
  // A repeat after a lost reply returns the same claim and leaves its record as it was.
  auto again = this->store().start(id, this->request(this->two(), {false, true}, "t1", &other));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->kind, StartVerdict::Kind::kRun);
  records = this->backend_.attempts(id);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].consumer, "host-1");
  // Without a record, a claim leaves the journal alone.
  const std::string quiet = this->backend_.deliver();
  EXPECT_EQ(this->start(quiet, this->one(), "u1").kind, StartVerdict::Kind::kRun);
  EXPECT_TRUE(this->backend_.attempts(quiet).empty());
}

// The outcome's journal record lands with complete(), whatever its verdict (a record next to
// the state, not a transition), replacing the record of the claim.
TYPED_TEST_P(LifecycleStoreContract, OutcomeKeepsItsJournalRecordInTheSameStepWhateverTheVerdict) {
  const std::string id = this->backend_.deliver();
  const AttemptRecord started = startedBy("host-1", 1'000);
  ASSERT_TRUE(this->store().start(id, this->request(this->one(), {true}, "t1", &started)).ok());
  const AttemptRecord failed = finishedH(1, "failed", 3'000);
  auto recorded = this->store().complete(id, "shop/h", "t1", failure(), nullptr, &failed);
  ASSERT_TRUE(recorded.ok()) << recorded.error().message;
  EXPECT_EQ(recorded->kind, CompleteVerdict::Kind::kFailed);
  EXPECT_FALSE(recorded->journal_failed);
  std::vector<AttemptRecord> records = this->backend_.attempts(id);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].attempt, 1);
  EXPECT_EQ(records[0].outcome, "failed");
  EXPECT_EQ(records[0].reason, "exit 3");
  EXPECT_EQ(records[0].finished_ms, 3'000);
  EXPECT_EQ(records[0].duration_ms, 2'000);
  // A stale outcome (the claim was taken over) changes no state but is journaled like before.
  const AttemptRecord stale = finishedH(2, "succeeded", 9'000);
  auto refused = this->store().complete(id, "shop/h", "nobody", success(), nullptr, &stale);
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->kind, CompleteVerdict::Kind::kStale);
  EXPECT_EQ(this->marker(id, "shop/h")->state, Marker::State::kFailed);
  records = this->backend_.attempts(id);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1].attempt, 2);
  EXPECT_EQ(records[1].outcome, "succeeded");
}

// A released claim whose handler never started leaves no attempt behind in the journal; one
// released without `unjournal` (a handler killed by an immediate stop) keeps its record.
TYPED_TEST_P(LifecycleStoreContract, ReleaseOfAnUnstartedClaimTakesItsJournalRecordAlong) {
  const std::string id = this->backend_.deliver();
  const AttemptRecord started = startedBy("host-1", 1'000);
  ASSERT_TRUE(this->store().start(id, this->request(this->one(), {true}, "t1", &started)).ok());
  ASSERT_EQ(this->backend_.attempts(id).size(), 1u);
  auto released = this->store().release(id, "shop/h", "t1", milliseconds(100), true);
  ASSERT_TRUE(released.ok());
  EXPECT_EQ(*released, ReleaseVerdict::kReleased);
  EXPECT_TRUE(this->backend_.attempts(id).empty());
  // The claim of a lost start() reply, released by token alone.
  const std::string lost = this->backend_.deliver();
  ASSERT_TRUE(
      this->store().start(lost, this->request(this->two(), {false, true}, "u1", &started)).ok());
  EXPECT_EQ(*this->store().release(lost, "", "u1", milliseconds(100), true),
            ReleaseVerdict::kReleased);
  EXPECT_TRUE(this->backend_.attempts(lost).empty());
  const std::string killed = this->backend_.deliver();
  ASSERT_TRUE(this->store().start(killed, this->request(this->one(), {true}, "v1", &started)).ok());
  EXPECT_EQ(*this->store().release(killed, "shop/h", "v1", milliseconds(100)),
            ReleaseVerdict::kReleased);
  EXPECT_EQ(this->backend_.attempts(killed).size(), 1u);
}

// The journal is for the console: a record that cannot be written changes no verdict and no
// state; the verdict only says so.
TYPED_TEST_P(LifecycleStoreContract, JournalThatCannotBeWrittenChangesNoVerdict) {
  const std::string id = this->backend_.deliver();
  this->backend_.breakJournal(id);
  const AttemptRecord started = startedBy("host-1", 1'000);
  auto claimed = this->store().start(id, this->request(this->one(1), {true}, "t1", &started));
  ASSERT_TRUE(claimed.ok()) << claimed.error().message;
  EXPECT_EQ(claimed->kind, StartVerdict::Kind::kRun);
  EXPECT_EQ(claimed->attempt, 1);
  EXPECT_TRUE(claimed->journal_failed);
  EXPECT_EQ(this->marker(id, "shop/h")->state, Marker::State::kClaimed);
  const AttemptRecord finished = finishedH(1, "failed", 3'000);
  const DlqEntry entry = dlqFor(id, "shop", "h", 1);
  auto recorded = this->store().complete(id, "shop/h", "t1", failure(), &entry, &finished);
  ASSERT_TRUE(recorded.ok()) << recorded.error().message;
  EXPECT_EQ(recorded->kind, CompleteVerdict::Kind::kExhausted);
  EXPECT_TRUE(recorded->dlq_written);
  EXPECT_TRUE(recorded->acked);
  EXPECT_TRUE(recorded->journal_failed);
  EXPECT_FALSE(this->backend_.pending(id));
  EXPECT_EQ(this->backend_.dlq().size(), 1u);
  EXPECT_FALSE(this->store().journal(id, finished).ok());  // alone, the write reports its error
  // The same for a release.
  const std::string other = this->backend_.deliver();
  this->backend_.breakJournal(other);
  ASSERT_TRUE(this->store().start(other, this->request(this->one(), {true}, "u1", &started)).ok());
  EXPECT_EQ(*this->store().release(other, "shop/h", "u1", milliseconds(100), true),
            ReleaseVerdict::kReleased);
  EXPECT_EQ(this->marker(other, "shop/h")->attempt, 0);
}

TYPED_TEST_P(LifecycleStoreContract, ObsoleteOccurrenceLeavesWithItsStateRetainedUnlessRunning) {
  const std::string id = this->backend_.deliver();
  Plan occurrence = this->one();
  occurrence.invocations[0].trigger = runtime::Trigger::kSchedule;
  this->start(id, occurrence, "t1");
  auto running = this->store().acknowledge(id, /*obsolete_occurrence=*/true);
  ASSERT_TRUE(running.ok());
  EXPECT_EQ(running->kind, AckVerdict::Kind::kUnresolved);
  this->complete(id, "shop/h", "t1", failure());  // attempts left, none running
  auto acked = this->store().acknowledge(id, /*obsolete_occurrence=*/true);
  ASSERT_TRUE(acked.ok());
  EXPECT_EQ(acked->kind, AckVerdict::Kind::kAcked);
  EXPECT_FALSE(this->backend_.pending(id));
  EXPECT_TRUE(this->backend_.field(id, std::string(kRetainedField)).has_value());
  EXPECT_TRUE(this->backend_.ttl(id).has_value());
  // An event's plan is never acknowledged unresolved, obsolete or not.
  const std::string event = this->backend_.deliver();
  this->start(event, this->one(), "t2");
  this->complete(event, "shop/h", "t2", failure());
  EXPECT_EQ(this->store().acknowledge(event, true)->kind, AckVerdict::Kind::kUnresolved);
  EXPECT_TRUE(this->backend_.pending(event));
}

// docs/pipeline.md "Acknowledgements in batches": a read's unowed messages settled together,
// each exactly as its own verb would, and never one whose recorded plan is unresolved.
TYPED_TEST_P(LifecycleStoreContract, SettleOfAReadActsAsEachVerbAloneAndNeverAcksAnOwedPlan) {
  const std::string unmatched = this->backend_.deliver();
  const std::string malformed = this->backend_.deliver();
  const std::string planned = this->backend_.deliver();  // classified earlier: owes a plan
  const std::string acked_before = this->backend_.deliver();
  this->start(planned, this->one(), "t1");
  ASSERT_TRUE(this->store().acknowledge(acked_before).ok());
  DlqEntry entry = dlqFor(malformed, "-", "-", 0);
  entry.reason = "malformed: not a JSON object";
  const std::vector<SettleRequest> requests = {{unmatched, false, std::nullopt},
                                               {malformed, false, entry},
                                               {planned, false, std::nullopt},
                                               {acked_before, false, std::nullopt}};
  const auto verdicts = this->store().settle(requests);
  ASSERT_EQ(verdicts.size(), 4u);
  for (const auto& verdict : verdicts) ASSERT_TRUE(verdict.ok()) << verdict.error().message;
  EXPECT_EQ(verdicts[0]->ack.kind, AckVerdict::Kind::kAcked);
  EXPECT_FALSE(this->backend_.pending(unmatched));
  ASSERT_TRUE(verdicts[1]->dlq);
  EXPECT_EQ(verdicts[1]->dlq->kind, DlqVerdict::Kind::kWritten);
  EXPECT_TRUE(verdicts[1]->dlq->acked);
  EXPECT_FALSE(this->backend_.pending(malformed));
  EXPECT_EQ(this->backend_.dlq().size(), 1u);
  EXPECT_EQ(verdicts[2]->ack.kind, AckVerdict::Kind::kUnresolved);
  EXPECT_EQ(verdicts[2]->ack.plan, this->one());
  EXPECT_TRUE(this->backend_.pending(planned));
  EXPECT_FALSE(verdicts[3]->dlq);
  EXPECT_EQ(verdicts[3]->ack.kind, AckVerdict::Kind::kAcked);  // XACK is idempotent
  // Repeated (a lost reply): the same verdicts, nothing written twice.
  const auto again = this->store().settle(requests);
  ASSERT_EQ(again.size(), 4u);
  ASSERT_TRUE(again[1].ok() && again[1]->dlq);
  EXPECT_EQ(again[1]->dlq->kind, DlqVerdict::Kind::kRetained);
  EXPECT_EQ(this->backend_.dlq().size(), 1u);
  EXPECT_EQ(again[2]->ack.kind, AckVerdict::Kind::kUnresolved);
  EXPECT_TRUE(this->backend_.pending(planned));
  EXPECT_TRUE(this->store().settle({}).empty());
}

// docs/pipeline.md "Acknowledgements in batches": however many messages one settle() carries
// (RedisLifecycleStore: one script call for all the acknowledgements), each gets the verdict
// acknowledge() alone would give it, in request order, with the same effects.
TYPED_TEST_P(LifecycleStoreContract, SettleOfManyAcknowledgementsGivesEachItsOwnVerdictInOrder) {
  std::vector<std::string> unmatched;
  for (int i = 0; i < 12; ++i) unmatched.push_back(this->backend_.deliver());
  Plan occurrence = this->one();
  occurrence.invocations[0].trigger = runtime::Trigger::kSchedule;
  const std::string waiting = this->backend_.deliver();  // obsolete, a retry due later
  this->start(waiting, occurrence, "t1");
  this->complete(waiting, "shop/h", "t1", failure());
  ASSERT_TRUE(this->backend_.dueAt(waiting));
  const std::string running = this->backend_.deliver();  // obsolete, but running right now
  const std::string event = this->backend_.deliver();    // an event's plan, never obsolete
  this->start(event, this->one(), "t3");
  this->complete(event, "shop/h", "t3", failure());
  const std::string done = this->backend_.deliver();  // its plan finished earlier
  this->start(done, this->one(), "t4");
  ASSERT_TRUE(this->complete(done, "shop/h", "t4", success()).acked);
  const std::string malformed = this->backend_.deliver();
  std::vector<SettleRequest> requests;
  for (std::size_t i = 0; i < unmatched.size(); ++i) {
    requests.push_back({unmatched[i], false, std::nullopt});
    if (i == 5) requests.push_back({malformed, false, dlqFor(malformed, "-", "-", 0)});
  }
  requests.push_back({waiting, true, std::nullopt});
  requests.push_back({running, true, std::nullopt});
  requests.push_back({event, true, std::nullopt});
  requests.push_back({done, false, std::nullopt});
  this->start(running, occurrence, "t2");  // last: its claim lasts 100 ms
  const auto verdicts = this->store().settle(requests);
  ASSERT_EQ(verdicts.size(), requests.size());
  for (const auto& verdict : verdicts) ASSERT_TRUE(verdict.ok()) << verdict.error().message;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const std::string& id = requests[i].id;
    if (id == malformed) {
      ASSERT_TRUE(verdicts[i]->dlq) << i;
      EXPECT_EQ(verdicts[i]->dlq->kind, DlqVerdict::Kind::kWritten);
      EXPECT_FALSE(this->backend_.pending(id));
      continue;
    }
    EXPECT_FALSE(verdicts[i]->dlq) << i;
    if (id == running || id == event) {
      EXPECT_EQ(verdicts[i]->ack.kind, AckVerdict::Kind::kUnresolved) << i;
      EXPECT_EQ(verdicts[i]->ack.plan, id == running ? occurrence : this->one());
      EXPECT_TRUE(this->backend_.pending(id));
      EXPECT_FALSE(this->backend_.field(id, std::string(kRetainedField)));
    } else if (id == done) {
      EXPECT_EQ(verdicts[i]->ack.kind, AckVerdict::Kind::kRetained);
    } else {
      EXPECT_EQ(verdicts[i]->ack.kind, AckVerdict::Kind::kAcked) << i;
      EXPECT_FALSE(this->backend_.pending(id));
    }
  }
  EXPECT_EQ(this->backend_.dlq().size(), 1u);
  // The obsolete occurrence left the due index and its state is retained.
  EXPECT_FALSE(this->backend_.dueAt(waiting));
  EXPECT_EQ(this->backend_.field(waiting, std::string(kRetainedField)), "1");
  EXPECT_TRUE(this->backend_.ttl(waiting).has_value());
  // An unmatched event leaves no state behind.
  EXPECT_FALSE(this->backend_.field(unmatched[0], std::string(kRetainedField)));
  EXPECT_TRUE(this->backend_.dueAt(event).has_value());  // still owed: its retry stays due
}

// docs/pipeline.md "Waiting": only the message's owner in the PEL starts it. A worker that still
// holds a message a replica took over, or acknowledged (say by other rules), runs nothing.
TYPED_TEST_P(LifecycleStoreContract, OnlyThePelOwnerStartsAMessage) {
  const std::string id = this->backend_.deliver();  // delivered to w1
  auto other = this->store().start(id, this->request(this->one(), {}, "t1", nullptr, "w2"));
  ASSERT_TRUE(other.ok()) << other.error().message;
  EXPECT_EQ(other->kind, StartVerdict::Kind::kElsewhere);
  EXPECT_EQ(other->owner, "w1");
  EXPECT_FALSE(this->backend_.field(id, std::string(kPlanField)));  // nothing recorded
  ASSERT_TRUE(this->store().acknowledge(id).ok());                  // a replica's unmatched verdict
  auto gone = this->store().start(id, this->request(this->one(), {}, "t2"));
  ASSERT_TRUE(gone.ok()) << gone.error().message;
  EXPECT_EQ(gone->kind, StartVerdict::Kind::kGone);
  EXPECT_FALSE(this->backend_.field(id, std::string(kPlanField)));  // no state left behind
  EXPECT_FALSE(this->backend_.dueAt(id));
}

// docs/pipeline.md "Waiting": a message that cannot start now leaves the worker: the parking
// consumer holds it in the PEL (nothing reclaims from it) and the due index says when.
TYPED_TEST_P(LifecycleStoreContract, AMessageThatCannotStartIsParkedUntilItIsDue) {
  const std::string id = this->backend_.deliver();
  auto parked = this->store().start(id, this->request(this->one(), {false}, "t1"));
  ASSERT_TRUE(parked.ok()) << parked.error().message;
  EXPECT_EQ(parked->kind, StartVerdict::Kind::kPending);
  EXPECT_EQ(this->backend_.owner(id), std::string(kParkingConsumer));
  ASSERT_TRUE(this->backend_.dueAt(id));
  EXPECT_NEAR(static_cast<double>(*this->backend_.dueAt(id) - this->backend_.nowMs()), 300, 60);
  EXPECT_EQ(parked->until, *this->backend_.dueAt(id));
  EXPECT_FALSE(this->marker(id, "shop/h"));  // nothing charged
  // A worker still holding it gets nothing; the poller's take brings it back.
  auto held = this->store().start(id, this->request(this->one(), {}, "t2"));
  EXPECT_EQ(held->kind, StartVerdict::Kind::kPending);
  EXPECT_EQ(this->start(id, this->one(), "t3").kind, StartVerdict::Kind::kRun);
  // A failed attempt parks it too, until its backoff ends.
  this->complete(id, "shop/h", "t3", failure());
  this->backend_.takeBack(id);
  EXPECT_EQ(this->store().start(id, this->request(this->one(), {}, "t4"))->kind,
            StartVerdict::Kind::kPending);
  EXPECT_EQ(this->backend_.owner(id), std::string(kParkingConsumer));
  EXPECT_EQ(this->backend_.dueAt(id), this->marker(id, "shop/h")->next_attempt_ms);
}

// docs/pipeline.md "Claims": a claim is only taken with a concurrency slot in hand.
TYPED_TEST_P(LifecycleStoreContract, TheNextInvocationWithoutASlotIsNamedAndNothingIsClaimed) {
  const std::string id = this->backend_.deliver();
  StartRequest request = this->request(this->two(), {}, "t1");
  request.runnable = {Runnability::kNeedsSlot, Runnability::kReady};
  auto slot = this->store().start(id, request);
  ASSERT_TRUE(slot.ok()) << slot.error().message;
  EXPECT_EQ(slot->kind, StartVerdict::Kind::kSlot);
  EXPECT_EQ(slot->index, 0u);  // one at a time, in plan order: not b
  EXPECT_FALSE(this->marker(id, "shop/a"));
  EXPECT_FALSE(this->marker(id, "shop/b"));
  EXPECT_EQ(this->backend_.owner(id), "w1");  // still here: the worker waits for a slot
  request.runnable = {Runnability::kReady, Runnability::kReady};
  EXPECT_EQ(this->store().start(id, request)->kind, StartVerdict::Kind::kRun);
}

// docs/pipeline.md "Waiting": once pause returns, no attempt of the app starts anywhere, and its
// backlog waits in the paused queue (nothing per sweep) until it is resumed.
TYPED_TEST_P(LifecycleStoreContract, APausedAppStartsNothingAndItsMessagesWaitForTheResume) {
  const std::string id = this->backend_.deliver();
  this->backend_.pause("shop");
  auto paused = this->store().start(id, this->request(this->one(), {}, "t1"));
  ASSERT_TRUE(paused.ok()) << paused.error().message;
  EXPECT_EQ(paused->kind, StartVerdict::Kind::kPending);
  EXPECT_EQ(paused->paused, std::vector<std::string>{"shop"});
  EXPECT_FALSE(this->marker(id, "shop/h"));
  EXPECT_EQ(this->backend_.owner(id), std::string(kParkingConsumer));
  EXPECT_TRUE(this->backend_.parkedFor("shop", id));
  EXPECT_FALSE(this->backend_.dueAt(id));  // not looked at again until the resume
  this->backend_.resume("shop");
  EXPECT_FALSE(this->backend_.parkedFor("shop", id));
  ASSERT_TRUE(this->backend_.dueAt(id));
  EXPECT_LE(*this->backend_.dueAt(id), this->backend_.nowMs());  // due now
  EXPECT_EQ(this->start(id, this->one(), "t2").kind, StartVerdict::Kind::kRun);
}

// docs/pipeline.md "Outages": an expired claim is not taken over right after an outage, so the
// worker that ran the handler records its real outcome; without that worker it is taken over
// once the grace has passed.
TYPED_TEST_P(LifecycleStoreContract, AClaimThatExpiredDuringAnOutageIsNotTakenOverAtOnce) {
  ClaimTimes times = shortClaims();
  times.outage_gap = milliseconds(400);
  times.takeover_grace = milliseconds(600);
  const std::string id = this->backend_.deliver();
  ASSERT_TRUE(this->store().heartbeat(times).ok());
  StartRequest first = this->request(this->one(1), {}, "t1");
  first.times = times;
  ASSERT_EQ(this->store().start(id, first)->kind, StartVerdict::Kind::kRun);
  this->begin(id, "shop/h", "t1");
  this->backend_.pass(milliseconds(500));  // no worker reached the store: an outage
  StartRequest replica = this->request(this->one(1), {}, "t2");
  replica.times = times;
  auto during = this->store().start(id, replica);
  ASSERT_TRUE(during.ok()) << during.error().message;
  EXPECT_EQ(during->kind, StartVerdict::Kind::kBusy);  // expired, but not taken over yet
  // The worker that ran it records its success, however late.
  EXPECT_EQ(this->complete(id, "shop/h", "t1", success()).kind, CompleteVerdict::Kind::kSucceeded);
  EXPECT_TRUE(this->backend_.dlq().empty());
  // Without that worker: taken over once the grace has passed.
  const std::string orphan = this->backend_.deliver();
  StartRequest claim = this->request(this->one(1), {}, "u1");
  claim.times = times;
  ASSERT_EQ(this->store().start(orphan, claim)->kind, StartVerdict::Kind::kRun);
  this->begin(orphan, "shop/h", "u1");
  this->backend_.pass(milliseconds(500));
  claim.token = "u2";
  EXPECT_EQ(this->store().start(orphan, claim)->kind, StartVerdict::Kind::kBusy);
  for (int beat = 0; beat < 3; ++beat) {  // workers reach the store again, within the gap
    ASSERT_TRUE(this->store().heartbeat(times).ok());
    this->backend_.pass(milliseconds(250));
  }
  ASSERT_TRUE(this->store().heartbeat(times).ok());
  claim.token = "u3";
  EXPECT_EQ(this->store().start(orphan, claim)->kind, StartVerdict::Kind::kOwesDlq);
}

// A finished message delivered again (its group re-created at 0) leaves the PEL again at once.
TYPED_TEST_P(LifecycleStoreContract, ARetainedMessageDeliveredAgainIsAcknowledgedAgain) {
  const std::string id = this->backend_.deliver();
  this->start(id, this->one(), "t1");
  ASSERT_TRUE(this->complete(id, "shop/h", "t1", success()).acked);
  this->backend_.redeliver(id);
  ASSERT_TRUE(this->backend_.pending(id));
  EXPECT_EQ(this->start(id, this->one(), "t2").kind, StartVerdict::Kind::kRetained);
  EXPECT_FALSE(this->backend_.pending(id));
}

// An obsolete occurrence owing its DLQ entry is not acknowledged before the entry is written.
TYPED_TEST_P(LifecycleStoreContract, AnObsoleteOccurrenceOwingItsDlqEntryLeavesOnlyOnceWritten) {
  const std::string id = this->backend_.deliver();
  Plan occurrence = this->one(1);
  occurrence.invocations[0].trigger = runtime::Trigger::kSchedule;
  this->start(id, occurrence, "t1");
  const CompleteVerdict exhausted = this->complete(id, "shop/h", "t1", failure());  // no entry
  EXPECT_EQ(exhausted.kind, CompleteVerdict::Kind::kExhausted);
  EXPECT_FALSE(exhausted.dlq_written);
  auto refused = this->store().acknowledge(id, /*obsolete_occurrence=*/true);
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused->kind, AckVerdict::Kind::kUnresolved);
  EXPECT_TRUE(this->backend_.pending(id));
  auto written = this->store().writeDlq(id, "shop/h", dlqFor(id, "shop", "h", 1));
  ASSERT_TRUE(written.ok());
  EXPECT_TRUE(written->acked);
  EXPECT_EQ(this->backend_.dlq().size(), 1u);
}

REGISTER_TYPED_TEST_SUITE_P(
    LifecycleStoreContract, FirstStartRecordsThePlanAndClaimsAttemptOne,
    RecordedPlanWinsOverALaterClassification, RepeatedStartWithTheSameTokenReturnsTheSameClaim,
    LiveClaimOnAnyInvocationMakesTheMessageBusy, FailedAttemptWaitsForItsBackoffOnTheStoresClock,
    DueIndexKeepsTheRetryOfOneInvocationWhileAnotherMoves,
    LastInvocationToResolveAcknowledgesWhicheverItIs, LastCompletionAcknowledgesAndRetainsInOneStep,
    AckIsRefusedWhileAPlannedInvocationIsNotTerminal,
    UnrunnableInvocationIsSkippedAndTheNextOneRuns,
    LastFailedAttemptWritesItsDlqEntryAndAcksAtomically,
    RepeatedCompleteReturnsTheSameVerdictAndChangesNothingTwice, StaleTokenChangesNothing,
    ReleaseGivesTheAttemptBackUncharged, ReleaseWithoutAFieldFindsTheTokensClaim,
    ExpiredStartedClaimCountsAsAnAttemptThatRanThenBacksOff,
    ExpiredUnstartedClaimChargesNothingAndIsDueAtOnce, ExpiredLastAttemptOwesOneDlqEntryWrittenOnce,
    RetainedStateIsInertForEveryVerb, UnrunnableMessageGetsOneDlqEntryAndItsAckInOneStep,
    UnrunnableVerdictDefersToARecordedPlan, UnplannedAckLeavesNoState,
    ClearedMissingPayloadIsRetainedAndThenInert, RenewalKeepsALiveClaimPastItsFirstDeadline,
    FailingInvocationDoesNotStopTheNextOne, JournalKeepsOneRecordPerAttemptTheEndReplacingTheStart,
    ClaimKeepsItsAttemptsJournalRecordInTheSameStep,
    OutcomeKeepsItsJournalRecordInTheSameStepWhateverTheVerdict,
    ReleaseOfAnUnstartedClaimTakesItsJournalRecordAlong, JournalThatCannotBeWrittenChangesNoVerdict,
    ObsoleteOccurrenceLeavesWithItsStateRetainedUnlessRunning,
    SettleOfAReadActsAsEachVerbAloneAndNeverAcksAnOwedPlan,
    SettleOfManyAcknowledgementsGivesEachItsOwnVerdictInOrder, OnlyThePelOwnerStartsAMessage,
    AMessageThatCannotStartIsParkedUntilItIsDue,
    TheNextInvocationWithoutASlotIsNamedAndNothingIsClaimed,
    APausedAppStartsNothingAndItsMessagesWaitForTheResume,
    AClaimThatExpiredDuringAnOutageIsNotTakenOverAtOnce,
    ARetainedMessageDeliveredAgainIsAcknowledgedAgain,
    AnObsoleteOccurrenceOwingItsDlqEntryLeavesOnlyOnceWritten);

}  // namespace relay::invocation::contract
