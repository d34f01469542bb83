#pragma once
// The flow-control part of the LifecycleStore contract (docs/pipeline.md "Flow control"): the
// same Backend as lifecycle_store_contract.h, plus
//
//     long long stat(const std::string& field, const std::string& counter);  // relay stats
//
// run unchanged against the in-memory store and RedisLifecycleStore. The store's clock is
// Redis TIME in the latter, so times are checked with a margin.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "contract/lifecycle_store_contract.h"
#include "invocation/flow.h"

namespace relay::invocation::contract {

/// shop/h with one gate.
inline Plan gated(FlowControl flow, int max_attempts = 3) {
  PlannedInvocation invocation = planned("shop", "h", max_attempts);
  invocation.flow = std::move(flow);
  return Plan{{invocation}};
}
inline Plan throttledPlan(int limit, milliseconds period, int burst) {
  FlowControl flow;
  flow.throttles.push_back({FlowScope::kRule, limit, period, burst});
  return gated(flow);
}
inline Plan keyedPlan(const std::string& value, int limit, bool singleton = false) {
  FlowControl flow;
  flow.key = KeyGate{FlowScope::kRule, limit, singleton, value};
  return gated(flow);
}
inline Plan dedupedPlan(const std::string& value, milliseconds ttl) {
  FlowControl flow;
  flow.dedupe = DedupeGate{FlowScope::kRule, ttl, value};
  return gated(flow);
}
inline Plan debouncedPlan(const std::string& value, milliseconds period, milliseconds max_wait) {
  FlowControl flow;
  flow.debounce = DebounceGate{FlowScope::kRule, period, max_wait, value};
  return gated(flow);
}

inline AttemptResult retryAfter(milliseconds delay, int cap) {
  AttemptResult result = failure("exit 75");
  result.deferred = true;
  result.retry_after = delay;
  result.max_deferrals = cap;
  return result;
}

template <typename Backend>
class FlowControlContract : public LifecycleStoreContract<Backend> {
 protected:
  /// The kinds of the flow notes of a verdict.
  static std::vector<FlowNote::Kind> kinds(const StartVerdict& verdict) {
    std::vector<FlowNote::Kind> out;
    for (const FlowNote& note : verdict.flow) out.push_back(note.kind);
    return out;
  }
  std::optional<FlowWaitState> waiting(const std::string& id) {
    auto text = this->backend_.field(id, std::string(kWaitPrefix) + "shop/h");
    return text ? parseFlowWait(*text) : std::nullopt;
  }
  bool dueNow(const std::string& id) {
    auto due = this->backend_.dueAt(id);
    return due && *due <= this->backend_.nowMs();
  }
  CompleteVerdict completeHeld(const std::string& id, const std::string& token,
                               const AttemptResult& result, const Plan& plan) {
    auto verdict = this->store().complete(id, "shop/h", token, result, nullptr, nullptr,
                                          &plan.invocations.at(0).flow);
    EXPECT_TRUE(verdict.ok()) << verdict.error().message;
    return verdict.ok() ? *verdict : CompleteVerdict{};
  }
};

TYPED_TEST_SUITE_P(FlowControlContract);

// GCRA: limit 2 per 400 ms with a burst of 1 admits two at once, then gives every later event a
// turn in arrival order (its earliest start, oldest first), charging nothing while it waits.
TYPED_TEST_P(FlowControlContract, AThrottleAdmitsItsBurstThenReservesTurnsOldestFirst) {
  const Plan plan = throttledPlan(2, milliseconds(400), 1);
  std::vector<std::string> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(this->backend_.deliver());
  const std::int64_t t0 = this->backend_.nowMs();
  EXPECT_EQ(this->start(ids[0], plan, "t0").kind, StartVerdict::Kind::kRun);
  EXPECT_EQ(this->start(ids[1], plan, "t1").kind, StartVerdict::Kind::kRun);
  const StartVerdict third = this->start(ids[2], plan, "t2");
  const StartVerdict fourth = this->start(ids[3], plan, "t3");
  ASSERT_EQ(third.kind, StartVerdict::Kind::kPending);
  ASSERT_EQ(fourth.kind, StartVerdict::Kind::kPending);
  EXPECT_EQ(this->kinds(third), std::vector<FlowNote::Kind>{FlowNote::Kind::kDeferred});
  EXPECT_EQ(third.flow.at(0).reason, "throttled");
  // Turns 200 ms apart (400 ms / 2), the third's first.
  EXPECT_NEAR(static_cast<double>(third.until - t0), 200, 60);
  EXPECT_NEAR(static_cast<double>(fourth.until - third.until), 200, 30);
  EXPECT_EQ(this->backend_.dueAt(ids[2]), third.until);
  EXPECT_EQ(this->waiting(ids[3])->reason, FlowWait::kThrottled);
  EXPECT_FALSE(this->marker(ids[2], "shop/h"));  // nothing charged
  EXPECT_EQ(this->backend_.owner(ids[2]), std::string(kParkingConsumer));
  EXPECT_EQ(this->backend_.stat("shop/h", "deferred"), 2);
  this->backend_.pass(milliseconds(third.until - this->backend_.nowMs() + 10));
  // The fourth, woken early, keeps its later turn; the third starts on its own.
  EXPECT_EQ(this->start(ids[3], plan, "t4").kind, StartVerdict::Kind::kPending);
  EXPECT_EQ(this->start(ids[2], plan, "t5").kind, StartVerdict::Kind::kRun);
  EXPECT_FALSE(this->waiting(ids[2]));  // it waits no more
  this->backend_.pass(milliseconds(fourth.until - this->backend_.nowMs() + 10));
  EXPECT_EQ(this->start(ids[3], plan, "t6").kind, StartVerdict::Kind::kRun);
  EXPECT_EQ(this->backend_.stat("shop/h", "deferred"), 2);  // a wait is counted once
}

// However the starts are asked for, no window of one period holds more than limit + burst
// admissions, and the backlog drains at the limit.
TYPED_TEST_P(FlowControlContract, NoWindowOfAThrottleAdmitsMoreThanLimitPlusBurst) {
  const Plan plan = throttledPlan(4, milliseconds(400), 1);
  std::vector<std::string> waiting;
  for (int i = 0; i < 12; ++i) waiting.push_back(this->backend_.deliver());
  std::vector<std::int64_t> admitted;
  int token = 0;
  const std::int64_t t0 = this->backend_.nowMs();
  while (!waiting.empty() && this->backend_.nowMs() - t0 < 5'000) {
    for (auto it = waiting.begin(); it != waiting.end();) {
      const auto due = this->backend_.dueAt(*it);
      if (due && *due > this->backend_.nowMs()) {
        ++it;
        continue;
      }
      const StartVerdict verdict = this->start(*it, plan, "t" + std::to_string(token++));
      if (verdict.kind == StartVerdict::Kind::kRun) {
        // The store's own time of the admission: the claim's deadline less its hold (100 ms).
        admitted.push_back(this->marker(*it, "shop/h")->deadline_ms - 100);
        it = waiting.erase(it);
      } else {
        ASSERT_EQ(verdict.kind, StartVerdict::Kind::kPending);
        ++it;
      }
    }
    this->backend_.pass(milliseconds(10));
  }
  ASSERT_EQ(admitted.size(), 12u);
  std::sort(admitted.begin(), admitted.end());
  for (std::size_t i = 0; i < admitted.size(); ++i) {
    const auto in_window = std::count_if(admitted.begin(), admitted.end(), [&](std::int64_t at) {
      return at >= admitted[i] && at < admitted[i] + 400;
    });
    EXPECT_LE(in_window, 5) << "window from admission " << i;
  }
  // 12 at 4 per 400 ms with a burst of 1: two at once, then one every 100 ms.
  EXPECT_GE(admitted.back() - admitted.front(), 950);
}

// A key's slots: the third event of a key limited to 2 waits in the key's queue (not in the due
// index: nothing looks at it per sweep) and is woken when a slot goes back; other keys run.
TYPED_TEST_P(FlowControlContract, AKeyLimitQueuesTheNextEventAndAnOutcomeWakesIt) {
  const Plan acme = keyedPlan(R"("acme")", 2);
  const std::string a1 = this->backend_.deliver();
  const std::string a2 = this->backend_.deliver();
  const std::string a3 = this->backend_.deliver();
  const std::string a4 = this->backend_.deliver();
  ASSERT_EQ(this->start(a1, acme, "t1").kind, StartVerdict::Kind::kRun);
  ASSERT_EQ(this->start(a2, acme, "t2").kind, StartVerdict::Kind::kRun);
  const StartVerdict queued = this->start(a3, acme, "t3");
  ASSERT_EQ(queued.kind, StartVerdict::Kind::kPending);
  EXPECT_EQ(queued.flow.at(0).reason, "key_busy");
  EXPECT_EQ(this->waiting(a3)->reason, FlowWait::kKeyBusy);
  EXPECT_EQ(this->backend_.owner(a3), std::string(kParkingConsumer));
  ASSERT_EQ(this->start(a4, acme, "t4").kind, StartVerdict::Kind::kPending);
  // Only the first in line is due, when the earliest slot would lapse (a dead worker's).
  ASSERT_TRUE(this->backend_.dueAt(a3));
  EXPECT_GT(*this->backend_.dueAt(a3), this->backend_.nowMs());
  EXPECT_FALSE(this->backend_.dueAt(a4));
  // Another key is not held up.
  const std::string b1 = this->backend_.deliver();
  EXPECT_EQ(this->start(b1, keyedPlan(R"("beta")", 2), "u1").kind, StartVerdict::Kind::kRun);
  // An outcome gives its slot back: the first in line is woken (due now), the next is not.
  const CompleteVerdict done = this->completeHeld(a1, "t1", success(), acme);
  EXPECT_EQ(done.woke, 1);
  EXPECT_TRUE(this->dueNow(a3));
  EXPECT_EQ(this->start(a4, acme, "t5").kind, StartVerdict::Kind::kPending);  // not its turn
  EXPECT_EQ(this->start(a3, acme, "t6").kind, StartVerdict::Kind::kRun);
  EXPECT_FALSE(this->waiting(a3));
  // A failure gives its slot back too; the retry waits its turn behind the queue.
  this->completeHeld(a2, "t2", failure("exit 3", milliseconds(1)), acme);
  EXPECT_TRUE(this->dueNow(a4));
  EXPECT_EQ(this->start(a4, acme, "t7").kind, StartVerdict::Kind::kRun);
  this->backend_.pass(milliseconds(5));  // its backoff is over: now it waits for its key
  EXPECT_EQ(this->start(a2, acme, "t8").kind, StartVerdict::Kind::kPending);
  EXPECT_EQ(this->waiting(a2)->reason, FlowWait::kKeyBusy);
  EXPECT_EQ(this->backend_.stat("shop/h", "deferred"), 3);
}

// A claim holds its key slot only as long as the claim: a worker that died (its claim expired)
// leaves a slot the first waiter takes, and the takeover of its claim frees it for good.
TYPED_TEST_P(FlowControlContract, AKeySlotOfALostWorkerIsFreedWithItsClaim) {
  const Plan acme = keyedPlan(R"("acme")", 1);
  const std::string lost = this->backend_.deliver();
  const std::string next = this->backend_.deliver();
  ASSERT_EQ(this->start(lost, acme, "t1").kind, StartVerdict::Kind::kRun);
  this->begin(lost, "shop/h", "t1");
  ASSERT_EQ(this->start(next, acme, "t2").kind, StartVerdict::Kind::kPending);
  // The waiter is due when the claim would lapse: the dead worker's slot cannot hold it forever.
  ASSERT_TRUE(this->backend_.dueAt(next));
  this->backend_.pass(milliseconds(*this->backend_.dueAt(next) - this->backend_.nowMs() + 20));
  EXPECT_EQ(this->start(next, acme, "t3").kind, StartVerdict::Kind::kRun);
  // The lost claim, taken over, is charged and backs off; it waits behind the runner.
  const StartVerdict taken = this->start(lost, acme, "t4");
  EXPECT_EQ(taken.kind, StartVerdict::Kind::kPending);
  EXPECT_EQ(this->marker(lost, "shop/h")->state, Marker::State::kFailed);
  EXPECT_EQ(this->marker(lost, "shop/h")->attempt, 1);
}

// The takeover of an expired started claim frees its slot and wakes the key's first waiter.
TYPED_TEST_P(FlowControlContract, TheTakeoverOfAClaimGivesItsKeySlotBack) {
  const Plan acme = keyedPlan(R"("acme")", 1);
  const std::string lost = this->backend_.deliver();
  const std::string next = this->backend_.deliver();
  ASSERT_EQ(this->start(lost, acme, "t1").kind, StartVerdict::Kind::kRun);
  this->begin(lost, "shop/h", "t1");
  ASSERT_EQ(this->start(next, acme, "t2").kind, StartVerdict::Kind::kPending);
  this->backend_.pass(milliseconds(200));
  EXPECT_EQ(this->start(lost, acme, "t3").kind, StartVerdict::Kind::kPending);  // backs off
  EXPECT_TRUE(this->dueNow(next));
  EXPECT_EQ(this->start(next, acme, "t4").kind, StartVerdict::Kind::kRun);
}

// release() and renew(): a claim given back frees its slot at once; a renewed one holds it.
TYPED_TEST_P(FlowControlContract, ReleaseFreesTheKeySlotAndRenewalHoldsIt) {
  const Plan acme = keyedPlan(R"("acme")", 1);
  const FlowControl& flow = acme.invocations[0].flow;
  const std::string first = this->backend_.deliver();
  const std::string second = this->backend_.deliver();
  ASSERT_EQ(this->start(first, acme, "t1").kind, StartVerdict::Kind::kRun);
  ASSERT_EQ(this->start(second, acme, "t2").kind, StartVerdict::Kind::kPending);
  auto renewed = this->store().renew(first, "shop/h", "t1", milliseconds(2'000), &flow);
  ASSERT_TRUE(renewed.ok());
  this->backend_.pass(milliseconds(200));  // past the first deadline, not the renewed one
  EXPECT_EQ(this->start(second, acme, "t3").kind, StartVerdict::Kind::kPending);
  auto released = this->store().release(first, "shop/h", "t1", milliseconds(0), false, &flow);
  ASSERT_TRUE(released.ok());
  EXPECT_EQ(*released, ReleaseVerdict::kReleased);
  EXPECT_TRUE(this->dueNow(second));
  EXPECT_EQ(this->start(second, acme, "t4").kind, StartVerdict::Kind::kRun);
}

// Dedupe: the second event with a key seen within the TTL is never run; its invocation is
// `deduplicated`, the message acknowledged as resolved; after the TTL the key runs again.
TYPED_TEST_P(FlowControlContract, ADuplicateEventIsDeduplicatedUntilItsKeyExpires) {
  const Plan order = dedupedPlan("1234", milliseconds(300));
  const std::string first = this->backend_.deliver();
  const std::string twice = this->backend_.deliver();
  ASSERT_EQ(this->start(first, order, "t1").kind, StartVerdict::Kind::kRun);
  const StartVerdict duplicate = this->start(twice, order, "t2");
  ASSERT_EQ(duplicate.kind, StartVerdict::Kind::kDone);
  ASSERT_EQ(this->kinds(duplicate), std::vector<FlowNote::Kind>{FlowNote::Kind::kDeduplicated});
  EXPECT_EQ(duplicate.flow[0].other, first);
  EXPECT_EQ(this->marker(twice, "shop/h")->state, Marker::State::kDeduplicated);
  EXPECT_EQ(this->marker(twice, "shop/h")->other, first);
  ASSERT_EQ(this->store().acknowledge(twice)->kind, AckVerdict::Kind::kAcked);
  EXPECT_FALSE(this->backend_.pending(twice));
  EXPECT_EQ(this->backend_.stat("shop/h", "deduplicated"), 1);
  // The first's retry is no duplicate of itself: the decision was made at its arrival.
  this->complete(first, "shop/h", "t1", failure("exit 3", milliseconds(1)));
  this->backend_.pass(milliseconds(5));
  EXPECT_EQ(this->start(first, order, "t5").attempt, 2);
  // Another key runs; after the TTL the same key runs again.
  EXPECT_EQ(this->start(this->backend_.deliver(), dedupedPlan("99", milliseconds(300)), "t3").kind,
            StartVerdict::Kind::kRun);
  this->backend_.pass(milliseconds(350));
  EXPECT_EQ(this->start(this->backend_.deliver(), order, "t4").kind, StartVerdict::Kind::kRun);
}

// Debounce: each event of a burst replaces the one before (superseded: acknowledged, never run)
// and the latest runs once its key was quiet for the period.
TYPED_TEST_P(FlowControlContract, DebounceRunsTheLatestEventOfABurstAfterItsQuietPeriod) {
  const Plan user = debouncedPlan("7", milliseconds(300), milliseconds(5'000));
  const std::string first = this->backend_.deliver();
  const std::string latest = this->backend_.deliver();
  const StartVerdict waits = this->start(first, user, "t1");
  ASSERT_EQ(waits.kind, StartVerdict::Kind::kPending);
  EXPECT_EQ(waits.flow.at(0).reason, "debounced");
  EXPECT_NEAR(static_cast<double>(waits.until - this->backend_.nowMs()), 300, 60);
  ASSERT_EQ(this->start(latest, user, "t2").kind, StartVerdict::Kind::kPending);
  EXPECT_TRUE(this->dueNow(first));  // it learns at once that it was replaced
  const StartVerdict replaced = this->start(first, user, "t3");
  ASSERT_EQ(replaced.kind, StartVerdict::Kind::kDone);
  ASSERT_EQ(this->kinds(replaced), std::vector<FlowNote::Kind>{FlowNote::Kind::kSuperseded});
  EXPECT_EQ(replaced.flow[0].other, latest);
  EXPECT_EQ(this->marker(first, "shop/h")->state, Marker::State::kSuperseded);
  EXPECT_EQ(this->start(latest, user, "t4").kind, StartVerdict::Kind::kPending);  // not quiet yet
  this->backend_.pass(milliseconds(*this->backend_.dueAt(latest) - this->backend_.nowMs() + 10));
  EXPECT_EQ(this->start(latest, user, "t5").kind, StartVerdict::Kind::kRun);
  EXPECT_EQ(this->backend_.stat("shop/h", "superseded"), 1);
  // The burst is over: the next event starts a new one and waits its own period.
  const StartVerdict next = this->start(this->backend_.deliver(), user, "t6");
  EXPECT_EQ(next.kind, StartVerdict::Kind::kPending);
}

// Workers record plans in any order: an older event (by stream id) recorded after a newer one
// of its burst or singleton key is the superseded one, and does not displace the newer.
TYPED_TEST_P(FlowControlContract, AnOlderEventRecordedLateIsSupersededByTheNewerOne) {
  const Plan user = debouncedPlan("7", milliseconds(300), milliseconds(5'000));
  const std::string older = this->backend_.deliver();
  const std::string newer = this->backend_.deliver();
  ASSERT_EQ(this->start(newer, user, "t1").kind, StartVerdict::Kind::kPending);
  const StartVerdict late = this->start(older, user, "t2");
  ASSERT_EQ(late.kind, StartVerdict::Kind::kDone);
  ASSERT_EQ(this->kinds(late), std::vector<FlowNote::Kind>{FlowNote::Kind::kSuperseded});
  EXPECT_EQ(late.flow[0].other, newer);
  this->backend_.pass(milliseconds(*this->backend_.dueAt(newer) - this->backend_.nowMs() + 10));
  EXPECT_EQ(this->start(newer, user, "t3").kind, StartVerdict::Kind::kRun);

  const Plan sync = keyedPlan(R"("acct-1")", 1, /*singleton=*/true);
  const std::string running = this->backend_.deliver();
  const std::string old_one = this->backend_.deliver();
  const std::string new_one = this->backend_.deliver();
  ASSERT_EQ(this->start(running, sync, "t4").kind, StartVerdict::Kind::kRun);
  ASSERT_EQ(this->start(new_one, sync, "t5").kind, StartVerdict::Kind::kPending);
  const StartVerdict replaced = this->start(old_one, sync, "t6");
  ASSERT_EQ(replaced.kind, StartVerdict::Kind::kDone);
  EXPECT_EQ(replaced.flow.at(0).other, new_one);
  EXPECT_EQ(this->marker(old_one, "shop/h")->state, Marker::State::kSuperseded);
  EXPECT_EQ(this->backend_.stat("shop/h", "superseded"), 2);
}

// A steady stream still runs: the latest event runs at most max_wait after its burst began.
TYPED_TEST_P(FlowControlContract, DebounceRunsASteadyStreamAtItsMaximumWait) {
  const Plan user = debouncedPlan("7", milliseconds(300), milliseconds(500));
  const std::int64_t t0 = this->backend_.nowMs();
  ASSERT_EQ(this->start(this->backend_.deliver(), user, "t1").kind, StartVerdict::Kind::kPending);
  this->backend_.pass(milliseconds(200));
  ASSERT_EQ(this->start(this->backend_.deliver(), user, "t2").kind, StartVerdict::Kind::kPending);
  this->backend_.pass(milliseconds(200));
  const std::string third = this->backend_.deliver();
  const StartVerdict waits = this->start(third, user, "t3");
  ASSERT_EQ(waits.kind, StartVerdict::Kind::kPending);
  EXPECT_NEAR(static_cast<double>(waits.until - t0), 500, 60);  // not 400 + 300
  this->backend_.pass(milliseconds(waits.until - this->backend_.nowMs() + 10));
  EXPECT_EQ(this->start(third, user, "t4").kind, StartVerdict::Kind::kRun);
}

// A singleton never runs two of a key at once, and a newer event replaces the waiting one.
TYPED_TEST_P(FlowControlContract, ASingletonReplacesItsWaitingEventAndNeverRunsTwo) {
  const Plan sync = keyedPlan(R"("acct-1")", 1, /*singleton=*/true);
  const std::string running = this->backend_.deliver();
  const std::string waiting = this->backend_.deliver();
  const std::string newest = this->backend_.deliver();
  ASSERT_EQ(this->start(running, sync, "t1").kind, StartVerdict::Kind::kRun);
  ASSERT_EQ(this->start(waiting, sync, "t2").kind, StartVerdict::Kind::kPending);
  ASSERT_EQ(this->start(newest, sync, "t3").kind, StartVerdict::Kind::kPending);
  EXPECT_TRUE(this->dueNow(waiting));  // replaced: it learns so at once
  const StartVerdict replaced = this->start(waiting, sync, "t4");
  ASSERT_EQ(replaced.kind, StartVerdict::Kind::kDone);
  EXPECT_EQ(this->marker(waiting, "shop/h")->state, Marker::State::kSuperseded);
  EXPECT_EQ(this->marker(waiting, "shop/h")->other, newest);
  EXPECT_EQ(this->start(newest, sync, "t5").kind, StartVerdict::Kind::kPending);  // one at a time
  EXPECT_EQ(this->completeHeld(running, "t1", success(), sync).woke, 1);
  EXPECT_EQ(this->start(newest, sync, "t6").kind, StartVerdict::Kind::kRun);
  EXPECT_EQ(this->backend_.stat("shop/h", "superseded"), 1);
}

// docs/runtimes.md "Retry-after": a deferral is not charged and runs again after its delay, up
// to the cap; past it the attempt counts as a failure. A repeated call changes nothing twice.
TYPED_TEST_P(FlowControlContract, ARetryAfterIsUnchargedUpToItsCap) {
  const std::string id = this->backend_.deliver();
  ASSERT_EQ(this->start(id, this->one(3), "t1").attempt, 1);
  const CompleteVerdict deferred =
      this->complete(id, "shop/h", "t1", retryAfter(milliseconds(200), 2));
  EXPECT_EQ(deferred.kind, CompleteVerdict::Kind::kDeferred);
  EXPECT_FALSE(deferred.acked);
  const auto marker = this->marker(id, "shop/h");
  EXPECT_EQ(marker->state, Marker::State::kFailed);
  EXPECT_TRUE(marker->deferred);
  EXPECT_EQ(marker->attempt, 0);  // nothing charged
  EXPECT_NEAR(static_cast<double>(marker->next_attempt_ms - this->backend_.nowMs()), 200, 60);
  EXPECT_EQ(this->backend_.dueAt(id), marker->next_attempt_ms);
  EXPECT_EQ(this->complete(id, "shop/h", "t1", retryAfter(milliseconds(200), 2)).kind,
            CompleteVerdict::Kind::kDeferred);  // a lost reply, repeated
  EXPECT_EQ(this->start(id, this->one(3), "t2").kind, StartVerdict::Kind::kPending);
  this->backend_.pass(milliseconds(250));
  ASSERT_EQ(this->start(id, this->one(3), "t3").attempt, 1);
  EXPECT_EQ(this->complete(id, "shop/h", "t3", retryAfter(milliseconds(10), 2)).kind,
            CompleteVerdict::Kind::kDeferred);
  this->backend_.pass(milliseconds(50));
  ASSERT_EQ(this->start(id, this->one(3), "t4").attempt, 1);
  // The cap is reached: this one is a failure, charged, with the backoff.
  const CompleteVerdict failed =
      this->complete(id, "shop/h", "t4", retryAfter(milliseconds(10), 2));
  EXPECT_EQ(failed.kind, CompleteVerdict::Kind::kFailed);
  EXPECT_EQ(this->marker(id, "shop/h")->attempt, 1);
  EXPECT_FALSE(this->marker(id, "shop/h")->deferred);
  EXPECT_EQ(this->backend_.stat("shop/h", "retry_after"), 2);
}

// docs/pipeline.md "Cancellation": a waiter of a key that is cancelled leaves the key's queue;
// one that was already promised the key's slot (woken, not started) gives it to the next in
// line at once instead of holding it for the promise's 30 s.
TYPED_TEST_P(FlowControlContract, ACancelledWaiterGivesItsPlaceAndItsPromisedSlotToTheNext) {
  const Plan acme = keyedPlan(R"("acme")", 1);
  const std::string a = this->backend_.deliver();
  const std::string b = this->backend_.deliver();
  const std::string c = this->backend_.deliver();
  const std::string d = this->backend_.deliver();
  ASSERT_EQ(this->start(a, acme, "t1").kind, StartVerdict::Kind::kRun);
  ASSERT_EQ(this->start(b, acme, "t2").kind, StartVerdict::Kind::kPending);
  ASSERT_EQ(this->start(c, acme, "t3").kind, StartVerdict::Kind::kPending);
  ASSERT_EQ(this->start(d, acme, "t4").kind, StartVerdict::Kind::kPending);
  // c is cancelled while it waits in line: it never runs and its message is done.
  auto cancelled = this->store().cancel(c, CancelRequest{"*", false, "c1"});
  ASSERT_TRUE(cancelled.ok()) << cancelled.error().message;
  ASSERT_EQ(cancelled->invocations.size(), 1u);
  EXPECT_EQ(cancelled->invocations[0].what, CancelledInvocation::What::kCancelled);
  EXPECT_TRUE(cancelled->acked);
  EXPECT_FALSE(this->waiting(c));
  // a ends: b is promised the slot (due now); then b is cancelled before it starts.
  EXPECT_EQ(this->completeHeld(a, "t1", success(), acme).woke, 1);
  EXPECT_TRUE(this->dueNow(b));
  auto second = this->store().cancel(b, CancelRequest{"shop/h", false, "c2"});
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(second->invocations.at(0).what, CancelledInvocation::What::kCancelled);
  // The slot went on to d, the next one still waiting: due now, and it starts.
  EXPECT_TRUE(this->dueNow(d));
  EXPECT_EQ(this->start(d, acme, "t5").kind, StartVerdict::Kind::kRun);
  EXPECT_EQ(this->marker(b, "shop/h")->state, Marker::State::kCancelled);
}

// docs/apps.md "Deadlines": an invocation waiting for a throttle turn later than its deadline
// is due at its deadline, and is dead-lettered then, not run at its turn.
TYPED_TEST_P(FlowControlContract, AWaitForATurnEndsAtTheDeadlineThatComesFirst) {
  Plan plan = throttledPlan(1, milliseconds(5'000), 0);
  plan.invocations[0].deadline = milliseconds(300);
  const std::string first = this->backend_.deliver();
  const std::string late = this->backend_.deliver();
  ASSERT_EQ(this->start(first, plan, "t1").kind, StartVerdict::Kind::kRun);
  const StartVerdict waits = this->start(late, plan, "t2");
  ASSERT_EQ(waits.kind, StartVerdict::Kind::kPending);
  const std::int64_t born = std::stoll(late.substr(0, late.find('-')));
  EXPECT_LE(waits.until, born + 300);  // not its turn, 5 s away
  this->backend_.pass(milliseconds(born + 310 - this->backend_.nowMs()));
  const StartVerdict ended = this->start(late, plan, "t3");
  ASSERT_EQ(ended.kind, StartVerdict::Kind::kOwesDlq);
  ASSERT_EQ(ended.owed_states.size(), 1u);
  EXPECT_EQ(ended.owed_states[0], "expired");
  EXPECT_EQ(this->marker(late, "shop/h")->state, Marker::State::kExpired);
}

REGISTER_TYPED_TEST_SUITE_P(
    FlowControlContract, ACancelledWaiterGivesItsPlaceAndItsPromisedSlotToTheNext,
    AWaitForATurnEndsAtTheDeadlineThatComesFirst,
    AThrottleAdmitsItsBurstThenReservesTurnsOldestFirst,
    NoWindowOfAThrottleAdmitsMoreThanLimitPlusBurst, AKeyLimitQueuesTheNextEventAndAnOutcomeWakesIt,
    AKeySlotOfALostWorkerIsFreedWithItsClaim, TheTakeoverOfAClaimGivesItsKeySlotBack,
    ReleaseFreesTheKeySlotAndRenewalHoldsIt, ADuplicateEventIsDeduplicatedUntilItsKeyExpires,
    DebounceRunsTheLatestEventOfABurstAfterItsQuietPeriod,
    DebounceRunsASteadyStreamAtItsMaximumWait, ASingletonReplacesItsWaitingEventAndNeverRunsTwo,
    AnOlderEventRecordedLateIsSupersededByTheNewerOne, ARetryAfterIsUnchargedUpToItsCap);

}  // namespace relay::invocation::contract
