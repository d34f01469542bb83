// docs/schedules.md "Publication": against a real redis-server.
#include <gtest/gtest.h>

#include <latch>
#include <set>
#include <thread>

#include "integration/stream/schedule_fixture.h"

namespace relay::stream::testing {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

class SchedulePublication : public ScheduleTest {
 protected:
  void SetUp() override {
    ScheduleTest::SetUp();
    writeApp("reports", kReports, kReportsHandlers);
    clock_.setWall(at("2024-05-16T00:55:02Z"));
    build();
  }
};

TEST_F(SchedulePublication, AnEntryHoldsTheEnvelopeAndThePayload) {
  auto publisher = this->publisher();
  const schedule::Occurrence nightly{"reports", "nightly", at("2024-05-16T01:00:00Z")};
  auto published = publisher->publish(*redis_, nightly, R"({"kind":"nightly","n":1})");
  ASSERT_TRUE(published.ok()) << published.error().message;
  ASSERT_TRUE(published->has_value());
  const StreamEntry entry = entryOf(**published);
  ASSERT_EQ(entry.fields.size(), 2u);
  EXPECT_EQ(entry.fields[0].first, "relay_schedule");
  EXPECT_EQ(entry.fields[0].second,
            R"({"app":"reports","schedule":"nightly","scheduled_at":"2024-05-16T01:00:00Z",)"
            R"("occurrence_id":"schedule:reports:nightly:2024-05-16T01:00:00Z"})");
  EXPECT_EQ(entry.fields[1].first, "event");
  EXPECT_EQ(entry.fields[1].second,
            R"({"source":"relay.schedule","app":"reports","schedule":"nightly",)"
            R"("scheduled_at":"2024-05-16T01:00:00Z","payload":{"kind":"nightly","n":1}})");
}

TEST_F(SchedulePublication, TheDedupeKeyHoldsTheEntryIdForTwoDays) {
  auto publisher = this->publisher();
  const schedule::Occurrence tick{"reports", "tick", at("2024-05-16T00:55:00Z")};
  auto first = publisher->publish(*redis_, tick, "{}");
  ASSERT_TRUE(first.ok() && first->has_value());
  const std::string key = "relay:events:occ:reports:tick:2024-05-16T00:55:00Z";
  EXPECT_EQ(publisher->dedupeKey(tick), key);
  EXPECT_EQ(*redis_->command({"GET", key})->string(), **first);
  const long long ttl = ttlOf(key);
  EXPECT_GT(ttl, std::chrono::milliseconds(hours(47)).count());
  EXPECT_LE(ttl, std::chrono::milliseconds(hours(48)).count());

  auto again = publisher->publish(*redis_, tick, "{}");
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->has_value()) << "a second publication of the same occurrence is refused";
  EXPECT_EQ(occurrences().size(), 1u);
}

TEST_F(SchedulePublication, ThreeWorkersPublishEachOccurrenceExactlyOnce) {
  std::vector<std::unique_ptr<catalog::SchedulePublisher>> publishers;
  std::vector<std::unique_ptr<redis::Connection>> connections;
  for (int i = 0; i < 3; ++i) {
    publishers.push_back(publisher());
    connections.push_back(server().connect());
  }
  int published = 0;
  int duplicates = 0;
  for (int round = 0; round < 8; ++round) {  // 00:55 ... 01:02, each worker in the same minute
    std::vector<catalog::PublishRound> results(3);
    std::latch start(3);
    std::vector<std::thread> workers;
    for (int i = 0; i < 3; ++i) {
      workers.emplace_back([&, i] {
        start.arrive_and_wait();
        results[i] = publishers[i]->publishDue(*connections[i]);
      });
    }
    for (std::thread& worker : workers) worker.join();
    for (const catalog::PublishRound& result : results) {
      EXPECT_TRUE(result.complete);
      published += result.published;
      duplicates += result.duplicates;
    }
    clock_.advance(minutes(1));
  }
  std::vector<std::string> expected = {"nightly@2024-05-15T01:00:00Z",  // caught up at start
                                       "nightly@2024-05-16T01:00:00Z"};
  for (int minute = 0; minute < 8; ++minute) {
    expected.push_back("tick@" + formatRfc3339(at("2024-05-16T00:55:00Z") + minutes(minute)));
  }
  const std::vector<std::string> found = occurrences();
  EXPECT_EQ(std::multiset<std::string>(found.begin(), found.end()),
            std::multiset<std::string>(expected.begin(), expected.end()));
  EXPECT_EQ(published, static_cast<int>(expected.size()));
  EXPECT_EQ(duplicates, 2 * static_cast<int>(expected.size()));
}

TEST_F(SchedulePublication, RoundsWithinOneMinutePublishNothingTwice) {
  auto publisher = this->publisher();
  EXPECT_EQ(publisher->publishDue(*redis_).published, 2);  // tick 00:55, nightly yesterday
  clock_.advance(seconds(30));
  const catalog::PublishRound again = publisher->publishDue(*redis_);
  EXPECT_EQ(again.published, 0);
  EXPECT_EQ(again.duplicates, 0) << "the planner remembers; Redis is not even asked";
  EXPECT_EQ(occurrences().size(), 2u);
}

TEST_F(SchedulePublication, CatchUpAfterDowntimePublishesOnlyTheLatestMissedOccurrence) {
  {
    auto before = publisher();
    EXPECT_EQ(before->publishDue(*redis_).published, 2);
  }
  // The worker is down for five hours: ticks 00:56-05:54 and nightly 01:00Z are missed.
  clock_.advance(hours(5));
  auto restarted = publisher();
  const catalog::PublishRound round = restarted->publishDue(*redis_);
  EXPECT_TRUE(round.complete);
  EXPECT_EQ(round.published, 2);
  EXPECT_EQ(round.duplicates, 0);
  const std::vector<std::string> expected = {
      "tick@2024-05-16T00:55:00Z", "nightly@2024-05-15T01:00:00Z", "tick@2024-05-16T05:55:00Z",
      "nightly@2024-05-16T01:00:00Z"};
  EXPECT_EQ(occurrences(), expected) << "monthly last fired on the 1st, over 24h ago: never";
}

TEST_F(SchedulePublication, ARestartWithinTheWindowRepublishesNothing) {
  auto before = publisher();
  EXPECT_EQ(before->publishDue(*redis_).published, 2);
  clock_.advance(seconds(20));
  auto restarted = publisher();  // same minute: its catch-up finds both already published
  const catalog::PublishRound round = restarted->publishDue(*redis_);
  EXPECT_EQ(round.published, 0);
  EXPECT_EQ(round.duplicates, 2);
  EXPECT_EQ(occurrences().size(), 2u);
}

TEST_F(SchedulePublication, AfterARedisOutageOnlyTheLatestMissedOccurrenceIsPublished) {
  auto publisher = this->publisher();
  EXPECT_EQ(publisher->publishDue(*redis_).published, 2);
  auto connection = server().connect();
  ASSERT_TRUE(server().stop().ok());
  for (int minute = 0; minute < 10; ++minute) {  // 00:56 ... 01:05: nightly 01:00Z in between
    clock_.advance(minutes(1));
    EXPECT_FALSE(publisher->publishDue(*connection).complete);
  }
  EXPECT_GE(metrics_.value("relay_redis_errors_total", {{"op", "schedule_publish"}}), 10);
  ASSERT_TRUE(server().start().ok());  // an empty server: persistence is off in tests
  redis_ = server().connect();
  clock_.advance(minutes(1));  // 01:06:02
  const catalog::PublishRound round = publisher->publishDue(*redis_);
  EXPECT_TRUE(round.complete);
  const std::vector<std::string> expected = {"tick@2024-05-16T01:06:00Z",
                                             "nightly@2024-05-16T01:00:00Z"};
  EXPECT_EQ(occurrences(), expected);
}

TEST_F(SchedulePublication, RunPublishesAtTheTopOfEveryMinuteUntilStopped) {
  auto publisher = this->publisher();
  // The FakeClock moves only when run() sleeps, so run() walks minute after minute at once.
  std::thread runner([&] { publisher->run(); });
  std::vector<std::string> found;
  for (int wait = 0; wait < 2000 && found.size() < 8; ++wait) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    found = occurrences();
  }
  publisher->stop();
  runner.join();
  found = occurrences();
  ASSERT_GE(found.size(), 8u);
  EXPECT_EQ(found[0], "tick@2024-05-16T00:55:00Z");
  EXPECT_EQ(found[1], "nightly@2024-05-15T01:00:00Z");
  std::vector<std::string> ticks;
  for (const std::string& occurrence : found) {
    if (occurrence.rfind("tick@", 0) == 0) ticks.push_back(occurrence);
  }
  // Every minute once, none skipped, in order.
  for (std::size_t i = 0; i < ticks.size(); ++i) {
    const WallTime expected = at("2024-05-16T00:55:00Z") + minutes(i);
    EXPECT_EQ(ticks[i], "tick@" + formatRfc3339(expected));
  }
}

}  // namespace
}  // namespace relay::stream::testing
