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
  // The two occurrences published just before the outage went with the server's data: the
  // recheck publishes them again first (docs/schedules.md "Failover"); then the catch-up.
  EXPECT_EQ(round.republished, 2);
  const std::vector<std::string> expected = {
      "nightly@2024-05-15T01:00:00Z", "tick@2024-05-16T00:55:00Z", "tick@2024-05-16T01:06:00Z",
      "nightly@2024-05-16T01:00:00Z"};
  EXPECT_EQ(occurrences(), expected) << "no tick of 00:56 ... 01:05, the outage's minutes";
}

// docs/schedules.md "Failover": a failover (asynchronous replication) can undo a publication
// after it succeeded: the dedupe key and the entry vanish together, and every worker has moved
// its mark past that minute. Emulated here by undoing both writes after a successful round.
TEST_F(SchedulePublication, AnOccurrenceWhosePublicationRedisLostIsPublishedAgain) {
  auto publisher = this->publisher();
  EXPECT_EQ(publisher->publishDue(*redis_).published, 2);  // tick 00:55, nightly yesterday
  const schedule::Occurrence tick{"reports", "tick", at("2024-05-16T00:55:00Z")};
  const std::string key = publisher->dedupeKey(tick);
  auto id = redis_->command({"GET", key});
  ASSERT_TRUE(id.ok() && id->optionalString()->has_value());
  const std::string lost(**id->optionalString());
  ASSERT_EQ(*redis_->command({"DEL", key})->integer(), 1);
  ASSERT_EQ(*redis_->command({"XDEL", "events", lost})->integer(), 1);
  clock_.advance(minutes(1));
  const catalog::PublishRound round = publisher->publishDue(*redis_);
  EXPECT_TRUE(round.complete);
  EXPECT_EQ(round.republished, 1);
  const std::vector<std::string> expected = {
      "nightly@2024-05-15T01:00:00Z", "tick@2024-05-16T00:55:00Z", "tick@2024-05-16T00:56:00Z"};
  EXPECT_EQ(occurrences(), expected) << "the lost occurrence is back, before the next one";
  EXPECT_EQ(metrics_.value("relay_schedule_republished_total"), 1);
  EXPECT_NE(log_.str().find("schedule occurrence lost by redis published again"),
            std::string::npos);
}

// The same with a real replica promoted while it lacked the master's last writes: the worker's
// next round, on the promoted replica, publishes the occurrence the old master alone had.
TEST_F(SchedulePublication, AFailoverThatLostThePublicationIsRepairedOnTheNewMaster) {
  auto replica_server = relay::testing::RedisServer::create();
  ASSERT_TRUE(replica_server.ok()) << replica_server.error().message;
  auto replica = (*replica_server)->connect();
  ASSERT_TRUE(redis_->command({"CONFIG", "SET", "repl-diskless-sync-delay", "0"}).ok());
  ASSERT_TRUE(replica->command({"REPLICAOF", "127.0.0.1", std::to_string(server().port())}).ok());
  const auto linked = [&] {
    auto info = replica->command({"INFO", "replication"});
    return info.ok() &&
           std::string(*info->string()).find("master_link_status:up") != std::string::npos;
  };
  for (int wait = 0; wait < 500 && !linked(); ++wait) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(linked()) << "the replica never synchronised";
  auto publisher = this->publisher();
  EXPECT_EQ(publisher->publishDue(*redis_).published, 2);
  // Both writes reached the replica...
  ASSERT_EQ(*redis_->command({"WAIT", "1", "5000"})->integer(), 1);
  // ...then the replica is cut off (a partition) and the old master takes one more minute.
  ASSERT_TRUE(replica->command({"REPLICAOF", "NO", "ONE"}).ok());
  clock_.advance(minutes(1));
  EXPECT_EQ(publisher->publishDue(*redis_).published, 1);  // tick 00:56, on the old master only
  // The failover: the worker's connections now reach the promoted replica.
  clock_.advance(minutes(1));
  const catalog::PublishRound round = publisher->publishDue(*replica);
  EXPECT_TRUE(round.complete);
  EXPECT_EQ(round.published, 1);  // tick 00:57
  EXPECT_EQ(round.republished, 1);
  std::vector<std::string> found;
  auto range = replica->command({"XRANGE", "events", "-", "+"});
  ASSERT_TRUE(range.ok());
  auto entries = parseEntries(range->view());
  ASSERT_TRUE(entries.ok());
  for (const StreamEntry& entry : *entries) {
    auto occurrence = schedule::parseEnvelope(*entry.find(schedule::kEnvelopeField));
    found.push_back(occurrence.ok() ? occurrence->id() : "?");
  }
  const std::vector<std::string> expected = {
      "schedule:reports:tick:2024-05-16T00:55:00Z", "schedule:reports:nightly:2024-05-15T01:00:00Z",
      "schedule:reports:tick:2024-05-16T00:56:00Z", "schedule:reports:tick:2024-05-16T00:57:00Z"};
  EXPECT_EQ(found, expected);
}

// What the check costs (docs/schedules.md "Failover"): one EXISTS per round over the recent
// dedupe keys, and a publish script only for an occurrence that is missing.
TEST_F(SchedulePublication, CheckingRecentOccurrencesCostsOneExistsPerRound) {
  auto publisher = this->publisher();
  ASSERT_EQ(publisher->publishDue(*redis_).published, 2);
  ASSERT_TRUE(redis_->command({"CONFIG", "RESETSTAT"}).ok());
  const auto calls = [&](const std::string& command) {
    auto info = redis_->command({"INFO", "commandstats"});
    const std::string text(*info->string());
    const std::string field = "cmdstat_" + command + ":calls=";
    const auto at = text.find(field);
    return at == std::string::npos ? 0LL : std::stoll(text.substr(at + field.size()));
  };
  constexpr int kRounds = 4;  // 00:56 ... 00:59: ticks only
  for (int round = 0; round < kRounds; ++round) {
    clock_.advance(minutes(1));
    const catalog::PublishRound result = publisher->publishDue(*redis_);
    EXPECT_EQ(result.published, 1);  // the minute's tick
    EXPECT_EQ(result.republished, 0);
  }
  const long long scripts = calls("evalsha") + calls("eval");
  EXPECT_EQ(scripts, kRounds) << "no script call beyond the due occurrences";
  // Each publish script runs one EXISTS of its own; the check adds one per round.
  EXPECT_EQ(calls("exists"), scripts + kRounds);
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
