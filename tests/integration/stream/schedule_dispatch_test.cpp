// docs/schedules.md "Consumption" and the schedule sentences of docs/pipeline.md:
// occurrences bypass classification, run through the shared invocation/DLQ lifecycle, obsolete
// ones are acknowledged and counted, malformed ones dead-lettered. Against a real redis-server.
#include <gtest/gtest.h>

#include "integration/stream/schedule_fixture.h"

namespace relay::stream::testing {
namespace {

using std::chrono::minutes;

// 03:00 Europe/Berlin (CEST) on 2024-05-16.
const schedule::Occurrence kNightly{"reports", "nightly", at("2024-05-16T01:00:00Z")};
constexpr const char* kNightlyPayload = R"({"kind":"nightly","n":1})";

class ScheduleDispatch : public ScheduleTest {
 protected:
  void SetUp() override {
    ScheduleTest::SetUp();
    writeApp("reports", kReports, kReportsHandlers);
    clock_.setWall(at("2024-05-16T01:00:03Z"));
  }

  /// Nothing ran as an ordinary event: the catch-all event rule never fired.
  void expectNoEventRun() {
    EXPECT_EQ(runtime_.runsOf("reports/bin/on-event.sh"), 0);
    EXPECT_EQ(metrics_.value("relay_events_total", {{"outcome", "matched"}}), 0);
    EXPECT_EQ(metrics_.value("relay_events_total", {{"outcome", "unmatched"}}), 0);
  }
};

TEST_F(ScheduleDispatch, APublishedOccurrenceRunsItsHandlerWithTriggerSchedule) {
  build();
  auto publisher = this->publisher();
  ASSERT_EQ(publisher->publishDue(*redis_).published, 2);  // tick 01:00 and nightly 01:00
  EXPECT_EQ(readOnce(), 2);
  const auto runs = runtime_.runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].handler, "bin/tick.sh");
  EXPECT_EQ(runs[1].app, "reports");
  EXPECT_EQ(runs[1].handler, "bin/nightly.sh");
  EXPECT_EQ(runs[1].trigger, runtime::Trigger::kSchedule);
  EXPECT_EQ(runs[1].attempt, 1);
  EXPECT_EQ(runs[1].input, kNightly.payload(kNightlyPayload)) << "the event field, verbatim";
  EXPECT_EQ(*entryOf(runs[1].message_id).find("event"), runs[1].input);
  EXPECT_EQ(pendingCount(), 0);
  EXPECT_EQ(marker(runs[1].message_id, "reports/bin/nightly.sh").substr(0, 12), "succeeded:1:");
  EXPECT_EQ(marker(runs[1].message_id, "relay:retained"), "1");
  EXPECT_EQ(metrics_.value("relay_events_total", {{"outcome", "schedule"}}), 2);
  EXPECT_EQ(
      metrics_.value("relay_invocations_total",
                     {{"app", "reports"}, {"handler", "bin/nightly.sh"}, {"outcome", "succeeded"}}),
      1);
  expectNoEventRun();
}

TEST_F(ScheduleDispatch, AFailedOccurrenceIsRetriedWithTheSchedulesRetries) {
  build();
  runtime_.script("reports/bin/nightly.sh", {"exit 3", ""});
  const std::string id = xaddOccurrence(kNightly, kNightlyPayload);
  readOnce();
  EXPECT_EQ(pendingCount(), 1);
  EXPECT_EQ(marker(id, "reports/bin/nightly.sh").substr(0, 9), "failed:1:");
  waitForBackoff();  // the first backoff step
  reclaim();
  EXPECT_EQ(runtime_.runsOf("reports/bin/nightly.sh"), 2);
  EXPECT_EQ(runtime_.runs().back().attempt, 2);
  EXPECT_EQ(runtime_.runs().back().trigger, runtime::Trigger::kSchedule);
  EXPECT_EQ(marker(id, "reports/bin/nightly.sh").substr(0, 12), "succeeded:2:");
  EXPECT_EQ(pendingCount(), 0);
  EXPECT_TRUE(dlqEntries().empty());
}

TEST_F(ScheduleDispatch, AnExhaustedOccurrenceIsDeadLetteredThenAcknowledged) {
  build();
  runtime_.failAlways("reports/bin/nightly.sh", "exit 9");
  const std::string id = xaddOccurrence(kNightly, kNightlyPayload);
  readOnce();
  waitForBackoff();
  reclaim();  // retries: 1, so this second attempt is the last
  EXPECT_EQ(runtime_.runsOf("reports/bin/nightly.sh"), 2);
  EXPECT_EQ(pendingCount(), 0);
  const auto entries = dlqEntries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].at("original_id"), id);
  EXPECT_EQ(entries[0].at("app"), "reports");
  EXPECT_EQ(entries[0].at("handler"), "bin/nightly.sh");
  EXPECT_EQ(entries[0].at("reason"), "exit 9");
  EXPECT_EQ(entries[0].at("kind"), "handler");
  EXPECT_EQ(entries[0].at("handler_attempts"), "2");
  EXPECT_EQ(entries[0].at("event"), kNightly.payload(kNightlyPayload));
  EXPECT_EQ(marker(id, "reports/bin/nightly.sh").substr(0, 12), "exhausted:2:");
  EXPECT_EQ(metrics_.value("relay_dlq_entries_total", {{"reason", "handler"}}), 1);
  expectNoEventRun();
}

TEST_F(ScheduleDispatch, AnOccurrenceOfAVanishedScheduleIsAcknowledgedAsObsolete) {
  build();
  xaddOccurrence({"reports", "weekly", kNightly.scheduled_at});
  xaddOccurrence({"gone", "nightly", kNightly.scheduled_at});
  const std::string removed = xaddOccurrence(kNightly, kNightlyPayload);
  // The schedule is removed from the template after its occurrence was published.
  apps_.write("reports/template.yaml", R"(runtime: exec
schedules:
  - name: tick
    cron: "* * * * *"
    handler: bin/tick.sh
)");
  registry_->reloadAll();
  // Past the hour a worker leaves an unknown schedule's occurrence to a worker on another
  // version of the template (ScheduleRollout.*): no worker knows these.
  clock_.setWall(real_clock_.now() + std::chrono::hours(1) + std::chrono::minutes(1));
  EXPECT_EQ(readOnce(), 3);
  EXPECT_TRUE(runtime_.runs().empty());
  EXPECT_EQ(pendingCount(), 0);
  EXPECT_TRUE(dlqEntries().empty());
  EXPECT_EQ(metrics_.value("relay_events_total", {{"outcome", "obsolete_schedule"}}), 3);
  EXPECT_EQ(*redis_->command({"EXISTS", keys_.state(removed)})->integer(), 0);
  EXPECT_NE(log_.str().find("obsolete schedule occurrence acknowledged"), std::string::npos);
}

TEST_F(ScheduleDispatch, AMalformedOccurrenceIsDeadLetteredAndNeverRunAsAnEvent) {
  build();
  // Every `event` here would match the catch-all event rule if it were classified.
  const std::string event = kNightly.payload(kNightlyPayload);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{not json", "relay_schedule: not valid JSON"},
      {R"({"app":"reports","schedule":"nightly","scheduled_at":"2024-05-16T01:00:00Z"})",
       "no \"occurrence_id\" member"},
      {R"({"app":"reports","schedule":"nightly","scheduled_at":"2024-05-16T01:00:00Z",)"
       R"("occurrence_id":"schedule:reports:nightly:2024-05-15T01:00:00Z"})",
       "does not match"},
      {R"({"app":["reports"],"schedule":"nightly","scheduled_at":"2024-05-16T01:00:00Z",)"
       R"("occurrence_id":"x"})",
       "\"app\" is array, expected a string"},
  };
  for (const auto& [envelope, why] : cases)
    xaddFields({"relay_schedule", envelope, "event", event});
  EXPECT_EQ(readOnce(), static_cast<int>(cases.size()));
  EXPECT_TRUE(runtime_.runs().empty());
  EXPECT_EQ(pendingCount(), 0);
  const auto entries = dlqEntries();
  ASSERT_EQ(entries.size(), cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(entries[i].at("reason").rfind("malformed schedule occurrence: ", 0), 0u)
        << entries[i].at("reason");
    EXPECT_NE(entries[i].at("reason").find(cases[i].second), std::string::npos)
        << entries[i].at("reason");
    EXPECT_EQ(entries[i].at("kind"), "schedule");
    EXPECT_EQ(entries[i].at("app"), "-");
    EXPECT_EQ(entries[i].at("handler"), "-");
    EXPECT_EQ(entries[i].at("handler_attempts"), "0");
    EXPECT_EQ(entries[i].at("event"), event);
  }
  EXPECT_EQ(metrics_.value("relay_events_total", {{"outcome", "malformed"}}),
            static_cast<double>(cases.size()));
  EXPECT_EQ(metrics_.value("relay_dlq_entries_total", {{"reason", "schedule"}}),
            static_cast<double>(cases.size()));
  expectNoEventRun();
}

TEST_F(ScheduleDispatch, AForgedScheduledAtThatIsNotAFiringIsDeadLettered) {
  build();
  // 01:30Z is 03:30 in Berlin: a real instant, a valid id, but not a firing of "0 3 * * *".
  const schedule::Occurrence forged{"reports", "nightly", at("2024-05-16T01:30:00Z")};
  const std::string id = xaddOccurrence(forged, kNightlyPayload);
  readOnce();
  EXPECT_TRUE(runtime_.runs().empty());
  EXPECT_EQ(pendingCount(), 0);
  const auto entries = dlqEntries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].at("original_id"), id);
  EXPECT_EQ(entries[0].at("reason"),
            "malformed schedule occurrence: scheduled_at 2024-05-16T01:30:00Z is not a firing of "
            "cron \"0 3 * * *\" in Europe/Berlin");
  EXPECT_EQ(entries[0].at("app"), "reports");
  EXPECT_EQ(entries[0].at("handler"), "bin/nightly.sh");
  EXPECT_EQ(entries[0].at("handler_attempts"), "0");
  EXPECT_EQ(marker(id, "reports/bin/nightly.sh"), "<nil>") << "no invocation was ever claimed";
  expectNoEventRun();
}

TEST_F(ScheduleDispatch, ARedeliveredMalformedOccurrenceGetsNoSecondDlqEntry) {
  build();
  const std::string id =
      xaddFields({"relay_schedule", "{not json", "event", kNightly.payload("{}")});
  // Another worker's delivery of the same message (the same DLQ bookkeeping applies).
  auto replica = replicaLifecycle("worker-2");
  auto store = newStore("worker-2");
  const std::atomic<bool> stopping{false};
  readOnce();
  EXPECT_EQ(replica->process(*store, entryOf(id), stopping), invocation::Delivery::kStale);
  EXPECT_EQ(dlqEntries().size(), 1u);
}

TEST_F(ScheduleDispatch, AnUnavailableHandlerLeavesTheOccurrencePendingUncharged) {
  build();
  runtime_.setUnavailable("reports/bin/nightly.sh", true);
  const std::string id = xaddOccurrence(kNightly, kNightlyPayload);
  readOnce();
  EXPECT_EQ(pendingCount(), 1);
  EXPECT_TRUE(dlqEntries().empty());
  EXPECT_EQ(marker(id, "reports/bin/nightly.sh").substr(0, 9), "failed:0:")
      << "the attempt was given back";
  runtime_.setUnavailable("reports/bin/nightly.sh", false);
  reclaim();
  EXPECT_EQ(runtime_.runsOf("reports/bin/nightly.sh"), 1);
  EXPECT_EQ(runtime_.runs().back().attempt, 1);
  EXPECT_EQ(pendingCount(), 0);
}

TEST_F(ScheduleDispatch, AnUnavailableAppLeavesTheOccurrencePending) {
  // The registry marks the whole app unavailable when its event rule's handler cannot run.
  runtime_.setUnavailable("reports/bin/on-event.sh", true);
  build();
  ASSERT_FALSE(registry_->snapshot()->find("reports")->status.available);
  xaddOccurrence(kNightly, kNightlyPayload);
  readOnce();
  EXPECT_TRUE(runtime_.runs().empty());
  EXPECT_EQ(pendingCount(), 1);
  EXPECT_TRUE(dlqEntries().empty());
  EXPECT_EQ(metrics_.value(
                "relay_invocations_total",
                {{"app", "reports"}, {"handler", "bin/nightly.sh"}, {"outcome", "unavailable"}}),
            1);
}

TEST_F(ScheduleDispatch, TheScheduleCurrentHandlerRuns) {
  build();
  const std::string id = xaddOccurrence(kNightly, kNightlyPayload);
  // Edited after publication: same schedule name, a new handler and no retries.
  apps_.write("reports/bin/nightly-v2.sh", "#!/bin/sh\nexit 0\n", 0755);
  apps_.write("reports/template.yaml", R"(runtime: exec
schedules:
  - name: nightly
    cron: "0 3 * * *"
    timezone: Europe/Berlin
    handler: bin/nightly-v2.sh
    retries: 0
)");
  registry_->reloadAll();
  runtime_.failAlways("reports/bin/nightly-v2.sh", "exit 4");
  readOnce();
  ASSERT_EQ(runtime_.runs().size(), 1u);
  EXPECT_EQ(runtime_.runs()[0].handler, "bin/nightly-v2.sh");
  // retries: 0 now, so the one failed attempt exhausts it at once.
  const auto entries = dlqEntries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].at("handler"), "bin/nightly-v2.sh");
  EXPECT_EQ(entries[0].at("original_id"), id);
}

}  // namespace
}  // namespace relay::stream::testing
