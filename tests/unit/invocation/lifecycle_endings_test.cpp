// How an invocation ends other than by its handler's success or its last failure, through the
// Lifecycle over the in-memory store: a cancellation (docs/pipeline.md "Cancellation"), a
// deadline (docs/apps.md "Deadlines"), and a replay copy's marks (docs/replay.md "Copies").
#include <gtest/gtest.h>

#include <thread>

#include "fakes/forwarding_store.h"
#include "fakes/in_memory_lifecycle_store.h"
#include "invocation/lifecycle.h"
#include "invocation/running_attempts.h"
#include "lifecycle_parts.h"

namespace relay::invocation {
namespace {

using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

PlannedInvocation endingOf(const std::string& handler, int max_attempts = 5) {
  PlannedInvocation invocation;
  invocation.app = "shop";
  invocation.handler = handler;
  invocation.max_attempts = max_attempts;
  invocation.timeout = seconds(30);
  return invocation;
}

/// The in-memory store with a hook after each start(): the moment between a claim and its
/// attempt's registration, where a cancellation may land.
class StartHookStore final : public relay::testing::ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  std::function<void(std::string_view id, const StartRequest&, const StartVerdict&)> after_start;

  Result<StartVerdict> start(std::string_view id, const StartRequest& request) override {
    auto verdict = ForwardingStore::start(id, request);
    if (verdict.ok() && after_start) after_start(id, request, *verdict);
    return verdict;
  }
};

class LifecycleEndings : public ::testing::Test, protected LifecycleParts {
 protected:
  void SetUp() override {
    catalog_.app("shop", {"a", "b", "h"});
    LifecycleSettings settings;
    settings.keys = {"events", "relay"};
    settings.consumer = "w1";
    settings.slot_wait = milliseconds(20);
    lifecycle_ =
        std::make_unique<Lifecycle>(settings, catalog_, runtime_, limiter_, nullptr, observer_,
                                    metrics_, logger_, clock_, random_, &running_);
  }
  /// A message published now by the store's clock (deadlines count from its id).
  Message message() {
    Message m;
    m.id = std::to_string(store_.nowMs()) + "-" + std::to_string(++next_id_);
    m.fields = {{"event", R"({"kind":"order"})"}};
    store_.deliver(m.id);
    return m;
  }
  Delivery process(LifecycleStore& store, const Message& m) {
    store_.claimFor(m.id, "w1", /*justid=*/true);
    return lifecycle_->process(store, m, stopping_);
  }
  Delivery process(const Message& m) { return process(store_, m); }
  void pass(std::chrono::nanoseconds duration) {
    store_clock_.advance(duration);
    clock_.advance(duration);
  }
  double outcomes(const std::string& handler, const std::string& outcome) {
    return metrics_.value("relay_invocations_total",
                          {{"app", "shop"}, {"handler", handler}, {"outcome", outcome}});
  }

  relay::testing::InMemoryLifecycleStore store_{store_clock_};
  RunningAttempts running_;
  std::unique_ptr<Lifecycle> lifecycle_;
  std::atomic<bool> stopping_{false};
  int next_id_ = 0;
};

// The cancels stream names the attempt; the worker that runs it stops it, and the invocation
// ends `cancelled` with attempts left: no retry, no DLQ entry, the message acknowledged.
TEST_F(LifecycleEndings, ACancelStopsTheRunningHandlerAndTheInvocationIsNeverRetried) {
  catalog_.planAll(Plan{{endingOf("h")}});
  runtime_.block("shop/h");
  const Message m = message();
  Delivery delivery = Delivery::kPending;
  std::thread worker([&] { delivery = process(m); });
  ASSERT_TRUE(runtime_.waitRunning(1));
  auto verdict = store_.cancel(m.id, CancelRequest{"*", false, "c1"});
  ASSERT_TRUE(verdict.ok());
  ASSERT_EQ(verdict->invocations.size(), 1u);
  ASSERT_EQ(verdict->invocations[0].what, CancelledInvocation::What::kRunning);
  // What the worker's cancel watcher does with the cancels stream's entry.
  EXPECT_TRUE(running_.cancel(m.id, "shop/h", verdict->invocations[0].token));
  worker.join();
  EXPECT_EQ(delivery, Delivery::kAcked);
  EXPECT_EQ(store_.marker(m.id, "shop/h")->state, Marker::State::kCancelled);
  EXPECT_EQ(runtime_.runsOf("shop/h"), 1);
  EXPECT_TRUE(store_.dlq().empty());
  EXPECT_EQ(outcomes("h", "cancelled"), 1);
  EXPECT_EQ(running_.size(), 0u);
  EXPECT_NE(log_.str().find("invocation cancelled: not retried"), std::string::npos);
}

// A cancellation read between the claim and the attempt's registration: the handler never
// starts, nothing is charged, and the next start records the cancellation.
TEST_F(LifecycleEndings, ACancelBetweenTheClaimAndTheStartRunsNothing) {
  catalog_.planAll(Plan{{endingOf("h")}});
  StartHookStore hooked(store_);
  hooked.after_start = [&](std::string_view id, const StartRequest& request,
                           const StartVerdict& verdict) {
    if (verdict.kind != StartVerdict::Kind::kRun) return;
    (void)store_.cancel(id, CancelRequest{"*", false, "c1"});
    running_.cancel(std::string(id), "shop/h", request.token);  // before its registration
  };
  const Message m = message();
  EXPECT_EQ(process(hooked, m), Delivery::kAcked);
  EXPECT_EQ(runtime_.runsOf("shop/h"), 0);
  const auto marker = store_.marker(m.id, "shop/h");
  EXPECT_EQ(marker->state, Marker::State::kCancelled);
  EXPECT_EQ(marker->attempt, 0);  // never charged
}

// `--dead-letter`: the cancelled invocation gets one DLQ entry, written by its worker.
TEST_F(LifecycleEndings, ACancelWithDeadLetterWritesTheEntryAndAcknowledges) {
  catalog_.planAll(Plan{{endingOf("h")}});
  runtime_.block("shop/h");
  const Message m = message();
  Delivery delivery = Delivery::kPending;
  std::thread worker([&] { delivery = process(m); });
  ASSERT_TRUE(runtime_.waitRunning(1));
  auto verdict = store_.cancel(m.id, CancelRequest{"shop/*", true, "c1"});
  ASSERT_TRUE(verdict.ok());
  running_.cancel(m.id, "shop/h", verdict->invocations.at(0).token);
  worker.join();
  EXPECT_EQ(delivery, Delivery::kAcked);
  const auto entries = store_.dlq();
  ASSERT_EQ(entries.size(), 1u);
  const std::map<std::string, std::string> entry(entries[0].begin(), entries[0].end());
  EXPECT_EQ(entry.at("reason"), "cancelled");
  EXPECT_EQ(entry.at("kind"), "handler");
  EXPECT_EQ(store_.marker(m.id, "shop/h")->state, Marker::State::kCancelled);
  EXPECT_TRUE(store_.marker(m.id, "shop/h")->dlq_written);
}

// docs/apps.md "Deadlines": a retry that would start after the deadline never does; the DLQ
// entry says `deadline`, counted in relay_invocations_total{outcome="expired"}.
TEST_F(LifecycleEndings, AnInvocationPastItsDeadlineIsDeadLetteredWithReasonDeadline) {
  PlannedInvocation limited = endingOf("h");
  limited.deadline = minutes(2);
  catalog_.planAll(Plan{{limited}});
  runtime_.failAlways("shop/h", "exit 3");
  const Message m = message();
  EXPECT_EQ(process(m), Delivery::kPending);  // attempt 1 failed, 1m backoff
  pass(minutes(1));
  EXPECT_EQ(process(m), Delivery::kPending);  // attempt 2 failed, 2m backoff: past the deadline
  pass(minutes(1));
  EXPECT_EQ(store_.dueAt(m.id), std::stoll(m.id.substr(0, m.id.find('-'))) + 120'000);
  EXPECT_EQ(process(m), Delivery::kAcked);
  EXPECT_EQ(runtime_.runsOf("shop/h"), 2);
  const auto entries = store_.dlq();
  ASSERT_EQ(entries.size(), 1u);
  const std::map<std::string, std::string> entry(entries[0].begin(), entries[0].end());
  EXPECT_EQ(entry.at("reason"), "deadline 2m (last attempt: exit 3)");
  EXPECT_EQ(entry.at("handler_attempts"), "2");
  EXPECT_EQ(outcomes("h", "expired"), 1);
  EXPECT_NE(log_.str().find("deadline passed: dead-lettered"), std::string::npos);
}

// docs/replay.md "Copies": a replay copy runs with RELAY_TRIGGER=replay and its origin in the
// environment, its log lines and its DLQ entry.
TEST_F(LifecycleEndings, AReplayCopyCarriesItsOriginToTheHandlerTheLogAndTheDlq) {
  PlannedInvocation copy = endingOf("h", 1);
  copy.trigger = runtime::Trigger::kReplay;
  catalog_.setClassify([copy](const Message&, WallTime) {
    Classification what;
    what.kind = Classification::Kind::kPlan;
    what.plan.invocations = {copy};
    what.replay = ReplayOrigin{"r-1", "1700000000000-0", ""};
    return what;
  });
  runtime_.failAlways("shop/h", "exit 3");
  const Message m = message();
  EXPECT_EQ(process(m), Delivery::kAcked);
  const auto runs = runtime_.runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].trigger, runtime::Trigger::kReplay);
  EXPECT_EQ(runs[0].message_id, m.id);  // a new invocation of its own
  const std::map<std::string, std::string> env(runs[0].env.begin(), runs[0].env.end());
  EXPECT_EQ(env.at("RELAY_REPLAY_ID"), "r-1");
  EXPECT_EQ(env.at("RELAY_ORIGINAL_MESSAGE_ID"), "1700000000000-0");
  const auto entries = store_.dlq();
  ASSERT_EQ(entries.size(), 1u);
  const std::map<std::string, std::string> entry(entries[0].begin(), entries[0].end());
  EXPECT_EQ(entry.at("replay"), "r-1");
  EXPECT_EQ(entry.at("replay_of"), "1700000000000-0");
  EXPECT_NE(log_.str().find("replay=r-1"), std::string::npos) << log_.str();
  EXPECT_EQ(metrics_.value("relay_events_total", {{"outcome", "replay"}}), 1);
}

// A dead letter replayed keeps the idempotency key of the invocation that failed.
TEST_F(LifecycleEndings, ADeadLetterReplayedKeepsItsInvocationId) {
  PlannedInvocation copy = endingOf("h", 1);
  copy.trigger = runtime::Trigger::kReplay;
  catalog_.setClassify([copy](const Message&, WallTime) {
    Classification what;
    what.kind = Classification::Kind::kPlan;
    what.plan.invocations = {copy};
    what.replay = ReplayOrigin{"r-2", "1700000000000-0", "1700000005000-0"};
    return what;
  });
  const Message m = message();
  EXPECT_EQ(process(m), Delivery::kAcked);
  ASSERT_EQ(runtime_.runs().size(), 1u);
  EXPECT_EQ(runtime_.runs()[0].message_id, "1700000000000-0");
}

TEST(RunningAttempts, ACancelBeforeTheRegistrationIsRememberedForIt) {
  RunningAttempts running(2);
  EXPECT_FALSE(running.cancel("1-0", "shop/h", "t1"));
  {
    const RunningAttempts::Handle handle = running.add("1-0", "shop/h", "t1");
    EXPECT_TRUE(handle.signal().requested());
    EXPECT_EQ(running.size(), 1u);
    const RunningAttempts::Handle other = running.add("1-0", "shop/h", "t2");
    EXPECT_FALSE(other.signal().requested());
    EXPECT_TRUE(running.cancel("1-0", "shop/h", "t2"));
    EXPECT_TRUE(other.signal().requested());
  }
  EXPECT_EQ(running.size(), 0u);
  // Only the last few cancelled claims are remembered.
  running.cancel("2-0", "shop/h", "a");
  running.cancel("3-0", "shop/h", "b");
  running.cancel("4-0", "shop/h", "c");
  EXPECT_FALSE(running.add("2-0", "shop/h", "a").signal().requested());
  EXPECT_TRUE(running.add("4-0", "shop/h", "c").signal().requested());
}

}  // namespace
}  // namespace relay::invocation
