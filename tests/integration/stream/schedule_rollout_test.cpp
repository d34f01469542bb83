// docs/schedules.md "Rolling deploys and cron edits": two workers on two versions of an app's
// template share one stream and group. An occurrence is never lost because a worker on the other
// version consumed it, an occurrence Relay published under another cron runs, and a schedule
// dead letter that names a handler can be replayed. Against a real redis-server.
#include <gtest/gtest.h>

#include "integration/stream/schedule_fixture.h"

namespace relay::stream::testing {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

// The next version of `reports` (kReports): a `weekly` schedule added (Thursdays 01:00Z, and
// 2024-05-16 is a Thursday) and the nightly moved from 03:00 to 03:30 Berlin.
constexpr const char* kReportsV2 = R"(runtime: exec
schedules:
  - name: tick
    cron: "* * * * *"
    handler: bin/tick.sh
  - name: nightly
    cron: "30 3 * * *"
    timezone: Europe/Berlin
    handler: bin/nightly.sh
    retries: 1
    payload: {kind: nightly, n: 1}
  - name: weekly
    cron: "0 1 * * thu"
    handler: bin/weekly.sh
)";
const std::vector<std::string> kReportsV2Handlers = {"bin/tick.sh", "bin/nightly.sh",
                                                     "bin/weekly.sh"};

const schedule::Occurrence kWeekly{"reports", "weekly", at("2024-05-16T01:00:00Z")};
const schedule::Occurrence kHalfPast{"reports", "nightly", at("2024-05-16T01:30:00Z")};
constexpr const char* kRolloutPayload = R"({"kind":"nightly","n":1})";

class ScheduleRollout : public ScheduleTest {
 protected:
  void SetUp() override {
    ScheduleTest::SetUp();
    writeApp("reports", kReports, kReportsHandlers);
    // The worker's clock near the time Redis stamps the entries with: the hold of an occurrence
    // this worker does not know counts from its publication (its stream id).
    clock_.setWall(real_clock_.now());
    build();
  }
  /// The new version (nightly at 03:30 Berlin) publishes its 01:30Z occurrence, at 01:30:03.
  void publishHalfPastByTheNewVersion() {
    clock_.setWall(at("2024-05-16T01:30:03Z"));
    auto v2 = otherVersion("reports", kReportsV2, kReportsV2Handlers);
    auto published = publisherOf(*v2)->publish(*redis_, kHalfPast, kRolloutPayload);
    ASSERT_TRUE(published.ok() && published->has_value());
  }
};

TEST_F(ScheduleRollout, AWorkerThatDoesNotKnowTheScheduleLeavesItsOccurrenceToOneThatDoes) {
  auto v2 = otherVersion("reports", kReportsV2, kReportsV2Handlers);
  const std::string id = xaddOccurrence(kWeekly);
  // The old version reads it first.
  EXPECT_EQ(readOnce(), 1);
  EXPECT_EQ(pendingCount(), 1) << "not acknowledged as obsolete";
  EXPECT_EQ(metrics_.value("relay_events_total", {{"outcome", "obsolete_schedule"}}), 0);
  EXPECT_NE(log_.str().find("not known on this worker"), std::string::npos) << log_.str();
  EXPECT_TRUE(runtime_.runs().empty());
  // The new version reclaims it and runs it.
  claimFor(id, "worker-2");
  EXPECT_EQ(v2->process(entryOf(id)), invocation::Delivery::kAcked);
  EXPECT_EQ(runtime_.runsOf("reports/bin/weekly.sh"), 1);
  ASSERT_FALSE(runtime_.runs().empty());
  EXPECT_EQ(runtime_.runs().back().trigger, runtime::Trigger::kSchedule);
  EXPECT_EQ(pendingCount(), 0);
}

TEST_F(ScheduleRollout, AnOccurrenceNoWorkerKnowsIsObsoleteOnceItsHoldEnds) {
  xaddOccurrence(kWeekly);
  xaddOccurrence({"gone", "nightly", kWeekly.scheduled_at});  // an app this worker lacks
  EXPECT_EQ(readOnce(), 2);
  EXPECT_EQ(pendingCount(), 2);
  clock_.advance(minutes(59));
  reclaim();
  EXPECT_EQ(pendingCount(), 2) << "still within the hour";
  clock_.advance(minutes(2));
  reclaim();
  EXPECT_EQ(pendingCount(), 0);
  EXPECT_EQ(metrics_.value("relay_events_total", {{"outcome", "obsolete_schedule"}}), 2);
  EXPECT_TRUE(dlqEntries().empty());
  EXPECT_TRUE(runtime_.runs().empty());
}

TEST_F(ScheduleRollout, AnOccurrencePublishedUnderThePreviousCronStillRuns) {
  // Published by Relay for 03:00 Berlin, then the nightly moves to 03:30 before it is consumed.
  clock_.setWall(at("2024-05-16T01:00:03Z"));
  const schedule::Occurrence nightly{"reports", "nightly", at("2024-05-16T01:00:00Z")};
  auto published = publisher()->publish(*redis_, nightly, kRolloutPayload);
  ASSERT_TRUE(published.ok() && published->has_value());
  apps_.write("reports/template.yaml", kReportsV2);
  apps_.write("reports/bin/weekly.sh", "#!/bin/sh\nexit 0\n", 0755);
  registry_->reloadAll();
  EXPECT_EQ(readOnce(), 1);
  EXPECT_EQ(runtime_.runsOf("reports/bin/nightly.sh"), 1);
  EXPECT_EQ(pendingCount(), 0);
  EXPECT_TRUE(dlqEntries().empty()) << "not called malformed";
  EXPECT_EQ(metrics_.value("relay_events_total", {{"outcome", "schedule"}}), 1);
}

TEST_F(ScheduleRollout, AWorkerOnTheOldCronRunsAnOccurrenceOfTheNewCron) {
  // The new version publishes 03:30 Berlin (01:30Z); the old one (03:00) consumes it.
  ASSERT_NO_FATAL_FAILURE(publishHalfPastByTheNewVersion());
  EXPECT_EQ(readOnce(), 1);
  EXPECT_EQ(runtime_.runsOf("reports/bin/nightly.sh"), 1);
  EXPECT_EQ(pendingCount(), 0);
  EXPECT_TRUE(dlqEntries().empty());
}

TEST_F(ScheduleRollout, AnOffCronOccurrenceRelayDidNotPublishIsStillDeadLettered) {
  ASSERT_NO_FATAL_FAILURE(publishHalfPastByTheNewVersion());
  // A copy XADDed by someone else: its dedupe key names the first entry, not this one.
  const std::string copy = xaddOccurrence(kHalfPast, kRolloutPayload);
  // And one no dedupe key speaks for at all.
  const schedule::Occurrence forged{"reports", "nightly", at("2024-05-16T01:45:00Z")};
  const std::string unknown = xaddOccurrence(forged);
  EXPECT_EQ(readOnce(), 3);
  EXPECT_EQ(runtime_.runsOf("reports/bin/nightly.sh"), 1);
  EXPECT_EQ(pendingCount(), 0);
  const auto entries = dlqEntries();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].at("original_id"), copy);
  EXPECT_EQ(entries[1].at("original_id"), unknown);
  for (const auto& entry : entries) {
    EXPECT_EQ(entry.at("kind"), "schedule");
    EXPECT_NE(entry.at("reason").find("is not a firing of cron \"0 3 * * *\""), std::string::npos)
        << entry.at("reason");
  }
}

}  // namespace
}  // namespace relay::stream::testing
