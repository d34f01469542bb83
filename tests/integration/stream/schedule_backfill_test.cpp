// docs/schedules.md "Backfill": ScheduleBackfill against a real redis-server, next to the
// scheduler's own publisher and a worker's lifecycle (the FakeClock of the fixture).
#include <gtest/gtest.h>

#include <latch>
#include <map>
#include <thread>

#include "catalog/schedule_backfill.h"
#include "integration/stream/schedule_fixture.h"
#include "support/redis_digest.h"

namespace relay::stream::testing {
namespace {

using catalog::BackfillOutcome;
using catalog::BackfillPlan;
using catalog::OverlapPolicy;
using std::chrono::hours;
using std::chrono::minutes;

class ScheduleBackfillTest : public ScheduleTest {
 protected:
  void SetUp() override {
    ScheduleTest::SetUp();
    writeApp("reports", kReports, kReportsHandlers);
    clock_.setWall(at("2024-05-16T01:00:30Z"));
    build();
  }
  catalog::ScheduleBackfill backfill() const {
    return catalog::ScheduleBackfill({"events", "relay"});
  }
  const app::Schedule& schedule(const std::string& name) {
    return *registry_->snapshot()->find("reports")->app->findSchedule(name);
  }
  BackfillPlan plan(const std::string& name, const char* from, const char* to,
                    OverlapPolicy overlap) {
    auto planned = backfill().plan(*redis_, "reports", schedule(name), at(from), at(to), overlap,
                                   clock_.now());
    EXPECT_TRUE(planned.ok()) << planned.error().message;
    return planned.ok() ? std::move(planned).value() : BackfillPlan{};
  }
  BackfillPlan run(const std::string& name, const char* from, const char* to,
                   OverlapPolicy overlap) {
    BackfillPlan planned = plan(name, from, to, overlap);
    const Status published = backfill().publish(*redis_, schedule(name), planned);
    EXPECT_TRUE(published.ok()) << published.error().message;
    return planned;
  }
  /// `<scheduled_at minute>=<outcome>` per item, for readable comparisons.
  static std::vector<std::string> outcomes(const BackfillPlan& plan) {
    std::vector<std::string> shown;
    for (const auto& item : plan.items) {
      const std::string text = item.occurrence.scheduledAtText();
      shown.push_back(text.substr(11, 5) + "=" + name(item.outcome));
    }
    return shown;
  }
  static std::string name(BackfillOutcome outcome) {
    switch (outcome) {
      case BackfillOutcome::kWouldPublish:
        return "would";
      case BackfillOutcome::kPublished:
        return "published";
      case BackfillOutcome::kAlreadyPublished:
        return "already";
      case BackfillOutcome::kSkippedUnfinished:
        return "unfinished";
      case BackfillOutcome::kSkippedOverlap:
        return "overlap";
    }
    return "?";
  }
  std::string publishTick(const char* scheduled_at) {
    auto published = publisher()->publish(*redis_, {"reports", "tick", at(scheduled_at)}, "{}");
    EXPECT_TRUE(published.ok() && published->has_value());
    return published.ok() && published->has_value() ? **published : "";
  }
};

TEST_F(ScheduleBackfillTest, PublishesOnlyTheMissingOccurrencesInOrder) {
  const std::string on_time = publishTick("2024-05-16T00:52:00Z");
  publishTick("2024-05-16T00:54:00Z");
  const BackfillPlan done =
      run("tick", "2024-05-16T00:51:00Z", "2024-05-16T00:55:00Z", OverlapPolicy::kAll);
  EXPECT_EQ(outcomes(done),
            (std::vector<std::string>{"00:51=published", "00:52=already", "00:53=published",
                                      "00:54=already", "00:55=published"}));
  EXPECT_EQ(done.items[1].message_id, on_time) << "the record names the scheduler's entry";
  // Each occurrence once, in the stream's order the two publications interleaved.
  EXPECT_EQ(occurrences(),
            (std::vector<std::string>{"tick@2024-05-16T00:52:00Z", "tick@2024-05-16T00:54:00Z",
                                      "tick@2024-05-16T00:51:00Z", "tick@2024-05-16T00:53:00Z",
                                      "tick@2024-05-16T00:55:00Z"}));
}

TEST_F(ScheduleBackfillTest, TheEntryAndTheRecordAreTheSchedulersOwn) {
  const BackfillPlan done =
      run("nightly", "2024-05-15T00:00:00Z", "2024-05-16T00:59:00Z", OverlapPolicy::kAll);
  ASSERT_EQ(outcomes(done), std::vector<std::string>{"01:00=published"});  // 03:00 CEST on the 15th
  const schedule::Occurrence nightly{"reports", "nightly", at("2024-05-15T01:00:00Z")};
  const StreamEntry entry = entryOf(done.items[0].message_id);
  ASSERT_EQ(entry.fields.size(), 2u);
  EXPECT_EQ(entry.fields[0],
            (std::pair<std::string, std::string>{"relay_schedule", nightly.envelope()}));
  EXPECT_EQ(entry.fields[1], (std::pair<std::string, std::string>{
                                 "event", nightly.payload(R"({"kind":"nightly","n":1})")}));
  const std::string key = "relay:events:occ:reports:nightly:2024-05-15T01:00:00Z";
  EXPECT_EQ(*redis_->command({"GET", key})->string(), done.items[0].message_id);
  EXPECT_GT(ttlOf(key), std::chrono::milliseconds(hours(47)).count());
  // The scheduler, asked for the same occurrence afterwards, finds it published.
  auto again = publisher()->publish(*redis_, nightly, R"({"kind":"nightly","n":1})");
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->has_value());
}

TEST_F(ScheduleBackfillTest, ASecondRunPublishesNothing) {
  run("tick", "2024-05-16T00:40:00Z", "2024-05-16T00:49:00Z", OverlapPolicy::kAll);
  const std::string digest = relay::testing::datasetDigest(*redis_);
  const BackfillPlan second =
      run("tick", "2024-05-16T00:40:00Z", "2024-05-16T00:49:00Z", OverlapPolicy::kAll);
  EXPECT_EQ(second.items.size(), 10u);
  EXPECT_EQ(second.count(BackfillOutcome::kAlreadyPublished), 10u);
  EXPECT_EQ(relay::testing::datasetDigest(*redis_), digest) << "nothing written";
  EXPECT_EQ(occurrences().size(), 10u);
}

TEST_F(ScheduleBackfillTest, ADryRunPlansAndWritesNothing) {
  publishTick("2024-05-16T00:58:00Z");
  const std::string digest = relay::testing::datasetDigest(*redis_);
  const BackfillPlan planned =
      plan("tick", "2024-05-16T00:57:00Z", "2024-05-16T00:59:00Z", OverlapPolicy::kAll);
  EXPECT_EQ(outcomes(planned),
            (std::vector<std::string>{"00:57=would", "00:58=already", "00:59=would"}));
  EXPECT_EQ(relay::testing::datasetDigest(*redis_), digest);
}

TEST_F(ScheduleBackfillTest, SkipPublishesOneAtATimeAndWaitsForItToFinish) {
  // Nothing unfinished: the earliest missing one only; the others would overlap it.
  BackfillPlan first =
      run("tick", "2024-05-16T00:50:00Z", "2024-05-16T00:52:00Z", OverlapPolicy::kSkip);
  EXPECT_EQ(outcomes(first),
            (std::vector<std::string>{"00:50=published", "00:51=overlap", "00:52=overlap"}));
  EXPECT_EQ(first.items[1].overlaps->message_id, first.items[0].message_id);
  // Published, not read by the group yet: unfinished, so nothing more.
  BackfillPlan second =
      run("tick", "2024-05-16T00:50:00Z", "2024-05-16T00:52:00Z", OverlapPolicy::kSkip);
  EXPECT_EQ(outcomes(second),
            (std::vector<std::string>{"00:50=already", "00:51=unfinished", "00:52=unfinished"}));
  ASSERT_TRUE(second.unfinished);
  EXPECT_EQ(second.unfinished->message_id, first.items[0].message_id);
  EXPECT_FALSE(second.unfinished->delivered);
  // Read and left pending (its handler fails and waits for a retry): still unfinished.
  runtime_.script("reports/bin/tick.sh", {"exit 3", ""});
  EXPECT_EQ(readOnce(), 1);
  BackfillPlan third =
      run("tick", "2024-05-16T00:50:00Z", "2024-05-16T00:52:00Z", OverlapPolicy::kSkip);
  ASSERT_TRUE(third.unfinished);
  EXPECT_TRUE(third.unfinished->delivered) << "pending in the group's PEL";
  EXPECT_EQ(third.count(BackfillOutcome::kPublished), 0u);
  // Its retry succeeds and acknowledges it: the next one is published.
  waitForBackoff();
  EXPECT_EQ(reclaim(), 1);
  ASSERT_EQ(pendingCount(), 0);
  BackfillPlan fourth =
      run("tick", "2024-05-16T00:50:00Z", "2024-05-16T00:52:00Z", OverlapPolicy::kSkip);
  EXPECT_EQ(outcomes(fourth),
            (std::vector<std::string>{"00:50=already", "00:51=published", "00:52=overlap"}));
}

TEST_F(ScheduleBackfillTest, SkipSeesAnUnfinishedOccurrenceOutsideTheWindow) {
  // The scheduler's occurrence of 01:00 waits in the stream: a backfill of an hour earlier
  // would run next to it.
  publishTick("2024-05-16T01:00:00Z");
  const BackfillPlan planned =
      plan("tick", "2024-05-16T00:00:00Z", "2024-05-16T00:01:00Z", OverlapPolicy::kSkip);
  EXPECT_EQ(outcomes(planned), (std::vector<std::string>{"00:00=unfinished", "00:01=unfinished"}));
  EXPECT_EQ(planned.items[0].overlaps->scheduled_at, at("2024-05-16T01:00:00Z"));
  // --overlap all ignores it.
  const BackfillPlan all =
      plan("tick", "2024-05-16T00:00:00Z", "2024-05-16T00:01:00Z", OverlapPolicy::kAll);
  EXPECT_EQ(outcomes(all), (std::vector<std::string>{"00:00=would", "00:01=would"}));
}

TEST_F(ScheduleBackfillTest, AnEntryTheStreamNoLongerHoldsIsNotUnfinished) {
  publishTick("2024-05-16T01:00:00Z");
  // The stream deleted (its records stay): nothing of it can run any more.
  ASSERT_TRUE(redis_->command({"DEL", "events"}).ok());
  const BackfillPlan planned =
      plan("tick", "2024-05-16T00:00:00Z", "2024-05-16T00:01:00Z", OverlapPolicy::kSkip);
  EXPECT_FALSE(planned.unfinished);
  EXPECT_EQ(outcomes(planned), (std::vector<std::string>{"00:00=would", "00:01=overlap"}));
}

TEST_F(ScheduleBackfillTest, RacingSchedulersPublishEachOccurrenceOnce) {
  // Three "workers" publish the window's occurrences as the scheduler does while two backfills
  // of the same window run, all released at once; every round a fresh window.
  constexpr int kRounds = 20;
  std::vector<std::unique_ptr<catalog::SchedulePublisher>> publishers;
  std::vector<std::unique_ptr<redis::Connection>> connections;
  for (int i = 0; i < 5; ++i) {
    publishers.push_back(publisher());
    connections.push_back(server().connect());
  }
  const app::Schedule& tick = schedule("tick");
  int published = 0;
  for (int round = 0; round < kRounds; ++round) {
    const WallTime from = at("2024-05-15T02:00:00Z") + minutes(5 * round);
    std::vector<int> counts(5, 0);
    std::latch start(5);
    std::vector<std::thread> threads;
    for (int i = 0; i < 5; ++i) {
      threads.emplace_back([&, i] {
        start.arrive_and_wait();
        if (i < 3) {
          for (int minute = 4; minute >= 0; --minute) {  // latest first, as a catch-up does
            auto done = publishers[i]->publish(*connections[i],
                                               {"reports", "tick", from + minutes(minute)}, "{}");
            if (done.ok() && done->has_value()) ++counts[i];
          }
          return;
        }
        auto planned = backfill().plan(*connections[i], "reports", tick, from, from + minutes(4),
                                       OverlapPolicy::kAll, clock_.now());
        if (!planned.ok()) return;
        if (!backfill().publish(*connections[i], tick, *planned).ok()) return;
        counts[i] = static_cast<int>(planned->count(BackfillOutcome::kPublished));
      });
    }
    for (auto& thread : threads) thread.join();
    int total = 0;
    for (int count : counts) total += count;
    EXPECT_EQ(total, 5) << "round " << round << ": each of 5 occurrences published by one";
    published += total;
  }
  const std::vector<std::string> all = occurrences();
  EXPECT_EQ(all.size(), static_cast<std::size_t>(5 * kRounds));
  EXPECT_EQ(std::set<std::string>(all.begin(), all.end()).size(), all.size()) << "no duplicate";
  EXPECT_EQ(published, 5 * kRounds);
}

TEST_F(ScheduleBackfillTest, AWorkerRunsABackfilledOccurrenceLikeAnOnTimeOne) {
  const BackfillPlan done =
      run("nightly", "2024-05-15T00:00:00Z", "2024-05-16T00:00:00Z", OverlapPolicy::kAll);
  ASSERT_EQ(done.count(BackfillOutcome::kPublished), 1u);
  EXPECT_EQ(readOnce(), 1);
  const auto runs = runtime_.runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].handler, "bin/nightly.sh");
  EXPECT_EQ(runs[0].trigger, runtime::Trigger::kSchedule);
  EXPECT_EQ(runs[0].message_id, done.items[0].message_id);
  EXPECT_EQ(runs[0].input, schedule::Occurrence({"reports", "nightly", at("2024-05-15T01:00:00Z")})
                               .payload(R"({"kind":"nightly","n":1})"));
  EXPECT_EQ(pendingCount(), 0);
  EXPECT_EQ(metrics_.value("relay_events_total", {{"outcome", "schedule"}}), 1);
}

TEST_F(ScheduleBackfillTest, AWindowMustBePastAndWithinTheRecordsLifetime) {
  const app::Schedule& tick = schedule("tick");
  const WallTime now = clock_.now();
  const auto refused = [&](WallTime from, WallTime to) {
    auto planned = backfill().plan(*redis_, "reports", tick, from, to, OverlapPolicy::kAll, now);
    return planned.ok() ? std::string("accepted") : planned.error().message;
  };
  EXPECT_NE(refused(now - minutes(5), now - minutes(6)).find("after it ends"), std::string::npos);
  EXPECT_NE(refused(now - minutes(5), now + minutes(1)).find("after now"), std::string::npos);
  EXPECT_NE(refused(now - hours(48), now).find("beyond the occurrence records"), std::string::npos);
  EXPECT_EQ(refused(now - hours(48) + minutes(1), now - hours(47)), "accepted");
  EXPECT_EQ(occurrences().size(), 0u);
}

TEST_F(ScheduleBackfillTest, AnEmptyWindowPlansNothing) {
  // The monthly fires on the 1st only.
  const BackfillPlan planned =
      plan("monthly", "2024-05-15T00:00:00Z", "2024-05-16T00:00:00Z", OverlapPolicy::kSkip);
  EXPECT_TRUE(planned.items.empty());
}

}  // namespace
}  // namespace relay::stream::testing
