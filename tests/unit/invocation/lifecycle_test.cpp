// The invocation lifecycle (docs/pipeline.md "One message") over the in-memory store: every
// delivery rule of issue 13 as a fast test. The store has its own clock (Redis TIME in
// production); the workers' clocks are separate FakeClocks.
#include "invocation/lifecycle.h"

#include <gtest/gtest.h>

#include <sstream>
#include <thread>

#include "fakes/fake_catalog.h"
#include "fakes/fake_clock.h"
#include "fakes/fake_runtime.h"
#include "fakes/in_memory_lifecycle_store.h"
#include "lifecycle_parts.h"

namespace relay::invocation {
namespace {

using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;
using Kind = Classification::Kind;

PlannedInvocation planned(const std::string& handler, int max_attempts = 5,
                          milliseconds timeout = seconds(30)) {
  PlannedInvocation invocation;
  invocation.app = "shop";
  invocation.handler = handler;
  invocation.max_attempts = max_attempts;
  invocation.timeout = timeout;
  return invocation;
}

class LifecycleTest : public ::testing::Test, protected LifecycleParts {
 protected:
  void SetUp() override {
    catalog_.app("shop", {"a", "b", "c", "h"});
    lifecycle_ = make(clock_);
  }
  std::unique_ptr<Lifecycle> make(Clock& clock, const std::string& consumer = "w1") {
    LifecycleSettings settings;
    settings.keys = {"events", "relay"};
    settings.consumer = consumer;
    settings.slot_wait = milliseconds(20);
    return std::make_unique<Lifecycle>(settings, catalog_, runtime_, limiter_, &renewer_, observer_,
                                       metrics_, logger_, clock, random_);
  }
  Message message(const std::string& event = R"({"kind":"order"})") {
    Message m;
    m.id = std::to_string(++next_id_) + "-0";
    m.fields = {{"event", event}};
    store_.deliver(m.id);
    return m;
  }
  /// A delivery to w1: the message is taken back from wherever it waits in the PEL first, as
  /// the reader, the reclaimer or the due-retry poller do (docs/pipeline.md "Waiting").
  Delivery process(const Message& m) { return processOn(*lifecycle_, "w1", m); }
  Delivery processOn(Lifecycle& worker, const std::string& consumer, const Message& m) {
    store_.claimFor(m.id, consumer, /*justid=*/true);
    return worker.process(store_, m, stopping_);
  }
  /// Time passes for the store and the worker alike.
  void pass(std::chrono::nanoseconds duration) {
    store_clock_.advance(duration);
    clock_.advance(duration);
  }
  std::optional<Marker> marker(const Message& m, const std::string& handler) {
    return store_.marker(m.id, "shop/" + handler);
  }
  std::map<std::string, std::string> dlq(std::size_t index) {
    const auto entries = store_.dlq();
    if (index >= entries.size()) return {};
    return {entries[index].begin(), entries[index].end()};
  }

  relay::testing::InMemoryLifecycleStore store_{store_clock_};
  ClaimRenewer renewer_{RenewerSettings{}, store_, metrics_, logger_, clock_};
  std::unique_ptr<Lifecycle> lifecycle_;
  std::atomic<bool> stopping_{false};
  int next_id_ = 0;
};

// Issue 13 item 1: classification happens once per message.
TEST_F(LifecycleTest, RedeliveryAfterTheBackoffRunsTheRecordedPlanEvenWhenANowRuleNoLongerMatches) {
  const WallTime created = clock_.now();
  // `at: [{gt: "now()-20s"}]` on an event stamped `created`.
  catalog_.setClassify([created](const Message&, WallTime now) {
    Classification what;
    what.kind = now - created < seconds(20) ? Kind::kPlan : Kind::kUnmatched;
    if (what.kind == Kind::kPlan) what.plan.invocations = {planned("h")};
    return what;
  });
  runtime_.script("shop/h", {"exit 1", ""});
  const Message m = message();
  EXPECT_EQ(process(m), Delivery::kPending);
  pass(minutes(1));
  EXPECT_EQ(process(m), Delivery::kAcked);
  ASSERT_EQ(runtime_.runsOf("shop/h"), 2);
  EXPECT_EQ(runtime_.runs().back().attempt, 2);
  EXPECT_EQ(marker(m, "h")->state, Marker::State::kSucceeded);
  EXPECT_TRUE(store_.retained(m.id));
  EXPECT_EQ(metrics_.value("relay_events_total", {{"outcome", "unmatched"}}), 0);
}

TEST_F(LifecycleTest, TemplateEditBetweenAttemptsDoesNotChangeWhatTheMessageOwes) {
  catalog_.planAll(Plan{{planned("a"), planned("b")}});
  runtime_.script("shop/a", {"exit 1", ""});
  const Message m = message();
  process(m);
  EXPECT_EQ(runtime_.runsOf("shop/b"), 1);
  // The edit drops b's rule and adds c's; a replica on the new version redelivers.
  catalog_.planAll(Plan{{planned("a"), planned("c")}});
  pass(minutes(1));
  EXPECT_EQ(process(m), Delivery::kAcked);
  EXPECT_EQ(runtime_.runsOf("shop/a"), 2);
  EXPECT_EQ(runtime_.runsOf("shop/c"), 0);
  EXPECT_EQ(store_.field(m.id, std::string(kPlanField)),
            encodePlan(Plan{{planned("a"), planned("b")}}));
}

TEST_F(LifecycleTest, AnUnmatchedVerdictCannotAcknowledgeAMessageWithAnUnresolvedPlan) {
  catalog_.planAll(Plan{{planned("h")}});
  runtime_.failAlways("shop/h");
  const Message m = message();
  process(m);
  catalog_.setClassify(nullptr);              // every rule removed
  EXPECT_EQ(process(m), Delivery::kPending);  // the retry is not due: refused, left pending
  EXPECT_TRUE(store_.pending(m.id));
  EXPECT_FALSE(store_.retained(m.id));
}

// Issue 13 item 2: an attempt is charged only when a handler started.
TEST_F(LifecycleTest, LostReplyToTheClaimChargesNothingAndTheInvocationRunsLater) {
  catalog_.planAll(Plan{{planned("h", /*max_attempts=*/1)}});
  const Message m = message();
  store_.loseNextReply("start");
  EXPECT_EQ(process(m), Delivery::kPending);
  EXPECT_EQ(runtime_.runsOf("shop/h"), 0);
  ASSERT_TRUE(marker(m, "h"));
  EXPECT_EQ(marker(m, "h")->attempt, 0);       // released, not charged
  EXPECT_TRUE(store_.attempts(m.id).empty());  // and the record its claim kept went with it
  for (int i = 0; i < 3; ++i) {
    pass(minutes(2));  // far past any claim
    process(m);
  }
  EXPECT_EQ(runtime_.runsOf("shop/h"), 1);
  EXPECT_EQ(runtime_.runs().back().attempt, 1);
  EXPECT_TRUE(store_.dlq().empty());  // retries: 0 and a blip: never dead-lettered unrun
  EXPECT_TRUE(store_.retained(m.id));
}

TEST_F(LifecycleTest, LostReplyToTheOutcomeIsRepeatedWithItsTokenAndNothingIsChargedTwice) {
  catalog_.planAll(Plan{{planned("h", /*max_attempts=*/1)}});
  const Message m = message();
  store_.loseNextReply("complete");
  EXPECT_EQ(process(m), Delivery::kPending);
  EXPECT_EQ(renewer_.owed(), 1u);
  renewer_.renewAll();  // the repeat gets the recorded verdict
  EXPECT_EQ(renewer_.owed(), 0u);
  EXPECT_EQ(process(m), Delivery::kStale);
  EXPECT_EQ(runtime_.runsOf("shop/h"), 1);
  EXPECT_EQ(marker(m, "h")->state, Marker::State::kSucceeded);
  EXPECT_TRUE(store_.dlq().empty());
  // The repeat carries the outcome's journal record too: one record, the outcome's.
  const std::vector<AttemptRecord> records = store_.attempts(m.id);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].outcome, "succeeded");
}

TEST_F(LifecycleTest, LostReplyToTheLastFailureWritesOneDlqEntry) {
  catalog_.planAll(Plan{{planned("h", /*max_attempts=*/1)}});
  runtime_.failAlways("shop/h", "exit 4");
  const Message m = message();
  store_.loseNextReply("complete");
  process(m);
  renewer_.renewAll();
  process(m);
  EXPECT_EQ(store_.dlq().size(), 1u);
  EXPECT_EQ(runtime_.runsOf("shop/h"), 1);
}

TEST_F(LifecycleTest, HandlerTheRuntimeCouldNotStartIsNeverCharged) {
  catalog_.planAll(Plan{{planned("h", /*max_attempts=*/1)}});
  runtime_.setUnavailable("shop/h", true);
  const Message m = message();
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(process(m), Delivery::kPending);
    pass(minutes(1));
  }
  EXPECT_EQ(marker(m, "h")->attempt, 0);
  EXPECT_TRUE(store_.dlq().empty());
  // The journal says why (docs/pipeline.md "State in Redis"): attempt 1, not run.
  std::vector<AttemptRecord> records = store_.attempts(m.id);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].attempt, 1);
  EXPECT_EQ(records[0].outcome, "not_run");
  EXPECT_NE(records[0].reason.find("unavailable"), std::string::npos);
  runtime_.setUnavailable("shop/h", false);
  EXPECT_EQ(process(m), Delivery::kAcked);
  records = store_.attempts(m.id);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].outcome, "succeeded");
}

// Issue 13 item 4: a long handler keeps its claim; order is kept across replicas.
TEST_F(LifecycleTest, LongHandlerKeepsItsClaimAndNoReplicaSkipsToTheNextHandler) {
  catalog_.planAll(Plan{{planned("a", 5, minutes(5)), planned("b")}});
  runtime_.block("shop/a");
  const Message m = message();
  std::thread first([&] { EXPECT_EQ(process(m), Delivery::kAcked); });
  ASSERT_TRUE(runtime_.waitRunning(1));
  relay::testing::FakeClock replica_clock;
  auto replica = make(replica_clock, "w2");
  for (int second = 10; second <= 240; second += 10) {
    pass(seconds(10));
    renewer_.renewAll();
    EXPECT_TRUE(store_.takeRenewed(m.id)) << "PEL idle refreshed at " << second << "s";
    EXPECT_EQ(processOn(*replica, "w2", m), Delivery::kPending) << second << "s";
    store_.claimFor(m.id, "w1", /*justid=*/true);  // the owner's renewal takes it back
  }
  EXPECT_EQ(runtime_.runsOf("shop/a"), 1);
  EXPECT_EQ(runtime_.runsOf("shop/b"), 0);  // never skipped ahead of the busy invocation
  // While it runs, the journal shows who runs it (the record its claim kept).
  const std::vector<AttemptRecord> running = store_.attempts(m.id);
  ASSERT_EQ(running.size(), 1u);
  EXPECT_EQ(running[0].handler, "a");
  EXPECT_EQ(running[0].consumer, "w1");
  EXPECT_EQ(running[0].finished_ms, 0);
  runtime_.unblock("shop/a");
  first.join();
  const auto runs = runtime_.runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].handler, "a");
  EXPECT_EQ(runs[1].handler, "b");
}

// Issue 13 item 5: deadlines come from the store's clock, never a worker's.
TEST_F(LifecycleTest, ReplicasWhoseClocksDifferByTenMinutesAgreeOnClaimsAndBackoff) {
  catalog_.planAll(Plan{{planned("h")}});
  runtime_.script("shop/h", {"exit 1", ""});
  runtime_.block("shop/h");
  relay::testing::FakeClock ahead(clock_.now() + minutes(10));
  auto replica = make(ahead, "w2");
  const Message m = message();
  std::thread first([&] { process(m); });
  ASSERT_TRUE(runtime_.waitRunning(1));
  EXPECT_EQ(processOn(*replica, "w2", m), Delivery::kPending);  // claim is live
  store_.claimFor(m.id, "w1", /*justid=*/true);                 // the owner's renewal takes it back
  runtime_.unblock("shop/h");
  first.join();
  ASSERT_EQ(marker(m, "h")->state, Marker::State::kFailed);
  EXPECT_EQ(processOn(*replica, "w2", m), Delivery::kPending);  // not due by the store
  EXPECT_EQ(runtime_.runsOf("shop/h"), 1);
  store_clock_.advance(minutes(1));
  EXPECT_EQ(processOn(*replica, "w2", m), Delivery::kAcked);
  EXPECT_EQ(runtime_.runsOf("shop/h"), 2);
}

// Issue 13 item 6: every ACK path retains the state atomically.
TEST_F(LifecycleTest, ObsoleteOccurrenceAcknowledgementRetainsItsState) {
  const Message m = message();
  const Plan plan{{planned("h")}};
  store_.setField(m.id, std::string(kPlanField), encodePlan(plan));
  store_.setField(m.id, "shop/h", "succeeded:1:t");
  catalog_.setClassify([](const Message&, WallTime) {
    Classification what;
    what.kind = Kind::kObsolete;
    what.reason = "schedule removed";
    return what;
  });
  EXPECT_EQ(process(m), Delivery::kAcked);
  EXPECT_TRUE(store_.retained(m.id));
  EXPECT_TRUE(store_.ttl(m.id));
  EXPECT_EQ(metrics_.value("relay_events_total", {{"outcome", "obsolete_schedule"}}), 1);
}

TEST_F(LifecycleTest, OccurrenceOfARemovedScheduleIsAcknowledgedObsoleteWithItsStateRetained) {
  PlannedInvocation occurrence = planned("h");
  occurrence.trigger = runtime::Trigger::kSchedule;
  catalog_.planAll(Plan{{occurrence}});
  runtime_.failAlways("shop/h");
  const Message m = message();
  EXPECT_EQ(process(m), Delivery::kPending);
  catalog_.setClassify([](const Message&, WallTime) {
    Classification what;
    what.kind = Kind::kObsolete;
    what.reason = "schedule removed";
    return what;
  });
  EXPECT_EQ(process(m), Delivery::kAcked);  // the retry was owed, but the schedule is gone
  EXPECT_EQ(runtime_.runsOf("shop/h"), 1);
  EXPECT_TRUE(store_.retained(m.id));
  EXPECT_TRUE(store_.ttl(m.id));
  EXPECT_FALSE(store_.dueAt(m.id));
}

// Issue 13 item 7: what cannot be classified or run here stays pending, uncharged.
TEST_F(LifecycleTest, MessageThatCannotBeClassifiedNowStaysPendingUntouched) {
  catalog_.setClassify([](const Message&, WallTime) {
    Classification what;
    what.kind = Kind::kHold;
    what.reason = "app broken has no valid template yet";
    return what;
  });
  const Message m = message();
  EXPECT_EQ(process(m), Delivery::kPending);
  EXPECT_TRUE(store_.pending(m.id));
  EXPECT_FALSE(store_.field(m.id, std::string(kPlanField)));
}

TEST_F(LifecycleTest, OwedInvocationOfAHandlerThisWorkerDoesNotKnowStaysPendingUncharged) {
  catalog_.planAll(Plan{{planned("gone", 1)}});
  const Message m = message();
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(process(m), Delivery::kPending);
    pass(minutes(10));
  }
  EXPECT_FALSE(marker(m, "gone"));
  EXPECT_TRUE(store_.dlq().empty());
  EXPECT_GE(metrics_.value("relay_invocations_total",
                           {{"app", "shop"}, {"handler", "gone"}, {"outcome", "unavailable"}}),
            1);
  // A replica (or this worker after a deploy) that has the handler runs it.
  catalog_.app("shop", {"gone"});
  EXPECT_EQ(process(m), Delivery::kAcked);
}

TEST_F(LifecycleTest, UnavailableAppIsNeverChargedNorDeadLettered) {
  catalog_.planAll(Plan{{planned("h", 1)}});
  catalog_.setAvailable("shop", false);  // invalid template, runtime not ready, or paused
  const Message m = message();
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(process(m), Delivery::kPending);
    pass(minutes(10));
  }
  EXPECT_EQ(runtime_.runsOf("shop/h"), 0);
  EXPECT_FALSE(marker(m, "h"));
  EXPECT_TRUE(store_.dlq().empty());
}

// Issue 13 item 10: a claim whose handler never started is given back on stop.
TEST_F(LifecycleTest, StopBetweenClaimAndStartReleasesTheClaimUncharged) {
  catalog_.planAll(Plan{{planned("h", 1)}});
  catalog_.onResolve([this] { stopping_ = true; });
  const Message m = message();
  EXPECT_EQ(process(m), Delivery::kPending);
  EXPECT_EQ(runtime_.runsOf("shop/h"), 0);
  ASSERT_TRUE(marker(m, "h"));
  EXPECT_EQ(marker(m, "h")->state, Marker::State::kFailed);
  EXPECT_EQ(marker(m, "h")->attempt, 0);
  // The record the claim kept went with it: no handler ran, no attempt to show.
  EXPECT_TRUE(store_.attempts(m.id).empty());
}

// docs/pipeline.md "Claims": the slot is taken before the claim, so a delivery waiting for one
// holds nothing in Redis (a kill -9 meanwhile charges nothing, and no replica sees it busy).
TEST_F(LifecycleTest, NoConcurrencySlotLeavesTheMessagePendingWithNothingClaimed) {
  ConcurrencyLimiter one(1);
  LifecycleSettings settings;
  settings.consumer = "w1";
  settings.slot_wait = milliseconds(5);
  Lifecycle narrow(settings, catalog_, runtime_, one, &renewer_, observer_, metrics_, logger_,
                   clock_, random_);
  catalog_.planAll(Plan{{planned("h", 1)}});
  auto held = one.acquire("other", 1, milliseconds(0));
  const Message m = message();
  EXPECT_EQ(processOn(narrow, "w1", m), Delivery::kPending);
  EXPECT_FALSE(marker(m, "h"));  // nothing claimed, nothing charged
  EXPECT_TRUE(store_.attempts(m.id).empty());
  EXPECT_EQ(store_.owner(m.id), "w1");  // left pending here, for a later try
  EXPECT_EQ(metrics_.value("relay_invocations_total",
                           {{"app", "shop"}, {"handler", "h"}, {"outcome", "blocked"}}),
            1);
  held.reset();
  EXPECT_EQ(processOn(narrow, "w1", m), Delivery::kAcked);  // a slot: due at once
}

TEST_F(LifecycleTest, FailingHandlerIsRetriedThenDeadLetteredWithItsOutputTailThenAcked) {
  catalog_.planAll(Plan{{planned("h", 2)}});
  runtime_.failAlways("shop/h", "exit 3");
  const Message m = message();
  EXPECT_EQ(process(m), Delivery::kPending);
  EXPECT_EQ(store_.field(m.id, std::string(kReasonPrefix) + "shop/h"), "exit 3");
  EXPECT_EQ(store_.field(m.id, std::string(kTailPrefix) + "shop/h"), "[shop/h] ran attempt 1");
  pass(seconds(59));
  EXPECT_EQ(process(m), Delivery::kPending);  // 1m backoff
  pass(seconds(1));
  EXPECT_EQ(process(m), Delivery::kAcked);
  ASSERT_EQ(store_.dlq().size(), 1u);
  const auto entry = dlq(0);
  EXPECT_EQ(entry.at("reason"), "exit 3");
  EXPECT_EQ(entry.at("exit_reason"), "exit 3");
  EXPECT_EQ(entry.at("output_tail"), "[shop/h] ran attempt 2");
  EXPECT_EQ(entry.at("handler_attempts"), "2");
  EXPECT_EQ(entry.at("kind"), "handler");
  EXPECT_EQ(entry.at("app"), "shop");
  EXPECT_EQ(entry.at("consumer"), "w1");
  EXPECT_EQ(metrics_.value("relay_dlq_entries_total", {{"reason", "handler"}}), 1);
}

TEST_F(LifecycleTest, OneFailureDoesNotStopTheNextInvocationAndOrderIsThePlans) {
  catalog_.planAll(Plan{{planned("a"), planned("b"), planned("c")}});
  runtime_.failAlways("shop/b");
  const Message m = message();
  EXPECT_EQ(process(m), Delivery::kPending);
  const auto runs = runtime_.runs();
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].handler, "a");
  EXPECT_EQ(runs[1].handler, "b");
  EXPECT_EQ(runs[2].handler, "c");
}

TEST_F(LifecycleTest, MalformedMessageIsDeadLetteredAndAckedWithoutRunningAnything) {
  catalog_.setClassify([](const Message&, WallTime) {
    Classification what;
    what.kind = Kind::kMalformed;
    what.reason = "malformed: not a JSON object";
    what.dlq_event = "[1]";
    return what;
  });
  const Message m = message("[1]");
  EXPECT_EQ(process(m), Delivery::kAcked);
  EXPECT_TRUE(runtime_.runs().empty());
  ASSERT_EQ(store_.dlq().size(), 1u);
  EXPECT_EQ(dlq(0).at("app"), "-");
  EXPECT_EQ(dlq(0).at("handler_attempts"), "0");
  EXPECT_EQ(dlq(0).at("kind"), "malformed");
  EXPECT_EQ(metrics_.value("relay_events_total", {{"outcome", "malformed"}}), 1);
}

/// Records what the lifecycle reports and hands every handler a trace context.
class RecordingObserver final : public LifecycleObserver {
 public:
  void onMessage(const Message& message) override { events.push_back("message " + message.id); }
  void onClassified(const Message&, const Classification& what) override {
    events.push_back("classified " + std::to_string(what.plan.invocations.size()));
  }
  void onAttemptStart(const AttemptInfo& attempt,
                      std::vector<std::pair<std::string, std::string>>& env) override {
    events.push_back("start " + attempt.invocation.handler + " " + std::to_string(attempt.attempt));
    env.emplace_back("TRACEPARENT", "00-trace-span-01");
  }
  void onAttemptEnd(const AttemptInfo& attempt, const runtime::Outcome* outcome) override {
    events.push_back("end " + attempt.invocation.handler + " " +
                     (outcome && outcome->succeeded ? "ok" : "failed"));
  }
  std::vector<std::string> events;
};

TEST_F(LifecycleTest, ObserverSeesEveryStepAndContributesHandlerEnvironment) {
  RecordingObserver recording;
  LifecycleSettings settings;
  settings.consumer = "w1";
  Lifecycle observed(settings, catalog_, runtime_, limiter_, &renewer_, recording, metrics_,
                     logger_, clock_, random_);
  catalog_.planAll(Plan{{planned("a"), planned("b")}});
  runtime_.failAlways("shop/b");
  const Message m = message();
  observed.process(store_, m, stopping_);
  EXPECT_EQ(recording.events,
            (std::vector<std::string>{"message " + m.id, "classified 2", "start a 1", "end a ok",
                                      "start b 1", "end b failed"}));
  const auto runs = runtime_.runs();
  ASSERT_FALSE(runs.empty());
  EXPECT_EQ(runs[0].env.back(),
            (std::pair<std::string, std::string>{"TRACEPARENT", "00-trace-span-01"}));
}

}  // namespace
}  // namespace relay::invocation
