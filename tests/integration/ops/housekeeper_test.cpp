// The worker's housekeeping against a real redis-server: the pending gauge and the group state
// /readyz reports, and retention applied from its own thread.
#include "worker/housekeeper.h"

#include <gtest/gtest.h>

#include <sstream>
#include <thread>

#include "common/system_clock.h"
#include "stream/group_keeper.h"
#include "support/redis_server.h"
#include "support/spawned_process.h"

namespace relay::worker {
namespace {

using relay::testing::SpawnedProcess;
using std::chrono::milliseconds;
using std::chrono::seconds;

class Housekeeper : public relay::testing::RedisTest {
 protected:
  void SetUp() override {
    RedisTest::SetUp();
    redis_ = server().connect();
  }
  std::unique_ptr<worker::Housekeeper> make(HousekeepingSettings settings = {},
                                            stream::RetentionSettings retention = {}) {
    trimmer_ = std::make_unique<stream::Trimmer>(keys_, retention, metrics_, logger_, clock_);
    return std::make_unique<worker::Housekeeper>(settings, server().endpoint(), keys_, *trimmer_,
                                                 throughput_, metrics_, logger_, clock_);
  }

  SystemClock clock_;
  observability::Metrics metrics_;
  std::ostringstream log_;
  observability::Logger logger_{log_, clock_};
  invocation::StreamKeys keys_{"events", "relay"};
  std::unique_ptr<stream::Trimmer> trimmer_;
  stream::ThroughputRecorder throughput_{keys_, metrics_, clock_};
  std::unique_ptr<redis::Connection> redis_;
};

TEST_F(Housekeeper, ItsThreadFlushesTheThroughputCountersAndOnceMoreAtStop) {
  HousekeepingSettings settings;
  settings.refresh_interval = milliseconds(20);
  auto housekeeper = make(settings);
  metrics_.countEvent("matched");
  housekeeper->start();
  const auto minute = [this] {
    const auto now = std::chrono::duration_cast<seconds>(clock_.now().time_since_epoch()).count();
    return keys_.minute(now / 60);
  };
  // The housekeeper's own thread writes within a few refresh intervals (bounded wait).
  std::string written;
  for (int i = 0; i < 500 && written.empty(); ++i) {
    auto value = redis_->command({"HGET", minute(), "events:matched"});
    if (value.ok() && !value->isNil()) written = std::string(*value->string());
    if (written.empty()) std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_EQ(written, "1");
  metrics_.countEvent("unmatched");
  housekeeper->stop();
  auto last = redis_->command({"HGET", minute(), "events:unmatched"});
  ASSERT_TRUE(last.ok());
  // The final flush at stop carried it (or a refresh before it did).
  EXPECT_FALSE(last->isNil());
}

TEST_F(Housekeeper, AMissingGroupIsReportedWithItsName) {
  auto housekeeper = make();
  EXPECT_FALSE(housekeeper->groupState().checked);
  housekeeper->refreshOnce(*redis_);
  const GroupState state = housekeeper->groupState();
  EXPECT_TRUE(state.checked);
  EXPECT_FALSE(state.exists);
  EXPECT_NE(state.problem.find("\"relay\""), std::string::npos) << state.problem;
}

TEST_F(Housekeeper, TheGroupExistsAndThePendingGaugeIsItsPelSize) {
  ASSERT_TRUE(redis_->command({"XGROUP", "CREATE", "events", "relay", "0", "MKSTREAM"}).ok());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(redis_->command({"XADD", "events", "*", "event", "{}"}).ok());
  }
  ASSERT_TRUE(
      redis_->command({"XREADGROUP", "GROUP", "relay", "c", "COUNT", "2", "STREAMS", "events", ">"})
          .ok());
  auto housekeeper = make();
  housekeeper->refreshOnce(*redis_);
  EXPECT_TRUE(housekeeper->groupState().exists);
  EXPECT_EQ(metrics_.value("relay_pending_messages"), 2);
}

TEST_F(Housekeeper, ItsThreadKeepsTheStateCurrentAndAppliesRetention) {
  // A DLQ entry written 30 days ago: the first pass at start trims it.
  ASSERT_TRUE(redis_->command({"XADD", keys_.dlq(), "1000-0", "reason", "old"}).ok());
  HousekeepingSettings settings;
  settings.refresh_interval = milliseconds(50);
  auto housekeeper = make(settings);
  housekeeper->start();
  EXPECT_TRUE(SpawnedProcess::waitUntil(
      [&] {
        return *redis_->command({"XLEN", keys_.dlq()})->integer() == 0;
      },
      seconds(10)));
  EXPECT_TRUE(
      SpawnedProcess::waitUntil([&] { return housekeeper->groupState().checked; }, seconds(10)));
  EXPECT_FALSE(housekeeper->groupState().exists);
  ASSERT_TRUE(redis_->command({"XGROUP", "CREATE", "events", "relay", "0", "MKSTREAM"}).ok());
  EXPECT_TRUE(
      SpawnedProcess::waitUntil([&] { return housekeeper->groupState().exists; }, seconds(10)));
  housekeeper->stop();
  housekeeper->stop();  // idempotent
}

TEST_F(Housekeeper, ItExplainsTheOldestPendingMessageAndWhatHoldsTrimmingBack) {
  ASSERT_TRUE(redis_->command({"XGROUP", "CREATE", "events", "relay", "0", "MKSTREAM"}).ok());
  // An entry from 1970 (far older than the 24 h retention) and a fresh one, both delivered; the
  // old one waits for a retry ten minutes from now.
  ASSERT_TRUE(redis_->command({"XADD", "events", "1000-0", "event", "{}"}).ok());
  ASSERT_TRUE(redis_->command({"XADD", "events", "*", "event", "{}"}).ok());
  ASSERT_TRUE(
      redis_->command({"XREADGROUP", "GROUP", "relay", "w", "STREAMS", "events", ">"}).ok());
  auto time = redis_->command({"TIME"});
  const long long now = std::stoll(std::string(*time->at(0)->string())) * 1000;
  ASSERT_TRUE(redis_
                  ->command({"HSET", keys_.state("1000-0"), "relay:plan", "e 3 1000 shop/bin/a\n",
                             "shop/bin/a", "failed:1:" + std::to_string(now + 600'000) + ":t"})
                  .ok());
  auto housekeeper = make();
  housekeeper->refreshOnce(*redis_);
  housekeeper->inspectOnce(*redis_);
  const StreamHealth health = housekeeper->streamHealth();
  EXPECT_TRUE(health.checked);
  EXPECT_EQ(health.problem, "");
  EXPECT_EQ(health.pending, 2);
  ASSERT_TRUE(health.oldest);
  EXPECT_EQ(health.oldest->entry.id, "1000-0");
  EXPECT_EQ(health.oldest->reason.kind, stream::PendingKind::kRetryWait);
  ASSERT_TRUE(health.held_back);
  EXPECT_EQ(health.held_back->entry.id, "1000-0");
  EXPECT_EQ(health.held_back_group, "relay");
  EXPECT_GT(metrics_.value("relay_oldest_pending_age_seconds"), 1e9);
  EXPECT_EQ(metrics_.value("relay_trim_held_back_seconds"),
            metrics_.value("relay_oldest_pending_age_seconds"));
  EXPECT_EQ(metrics_.value("relay_trim_held_back_info",
                           {{"group", "relay"}, {"id", "1000-0"}, {"reason", "retry_wait"}}),
            1);
  EXPECT_EQ(metrics_.value("relay_oldest_pending_info",
                           {{"id", "1000-0"}, {"consumer", "w"}, {"reason", "retry_wait"}}),
            1);
  // Logged once, not at every refresh.
  housekeeper->inspectOnce(*redis_);
  const std::string log = log_.str();
  const std::size_t first = log.find("stream trimming is held back");
  ASSERT_NE(first, std::string::npos) << log;
  EXPECT_EQ(log.find("stream trimming is held back", first + 1), std::string::npos) << log;
  EXPECT_NE(log.find("message_id=1000-0"), std::string::npos) << log;
  // The position is recorded for a re-creation: just before the oldest pending entry.
  EXPECT_EQ(*redis_->command({"HGET", keys_.groupRecord(), "position"})->string(),
            "999-18446744073709551615");
  // Acknowledged: nothing holds trimming back any more, and the log says so.
  ASSERT_TRUE(redis_->command({"XACK", "events", "relay", "1000-0"}).ok());
  housekeeper->inspectOnce(*redis_);
  EXPECT_FALSE(housekeeper->streamHealth().held_back);
  EXPECT_EQ(metrics_.value("relay_trim_held_back_seconds"), 0);
  EXPECT_NE(log_.str().find("no longer held back"), std::string::npos);
}

TEST_F(Housekeeper, ARecreatedGroupIsLoggedAsAnErrorByOneHousekeeper) {
  ASSERT_TRUE(redis_->command({"HSET", keys_.groupRecord(), "position", "7-0"}).ok());
  ASSERT_TRUE(stream::ensureGroup(*redis_, keys_).ok());
  auto housekeeper = make();
  housekeeper->inspectOnce(*redis_);
  housekeeper->inspectOnce(*redis_);
  const std::string log = log_.str();
  const std::size_t at = log.find("error the consumer group was missing");
  ASSERT_NE(at, std::string::npos) << log;
  EXPECT_NE(log.find("at=7-0", at), std::string::npos) << log;
  EXPECT_EQ(log.find("error the consumer group was missing", at + 1), std::string::npos) << log;
}

TEST_F(Housekeeper, RedisGoingAwayIsReportedAndRecoveredFrom) {
  ASSERT_TRUE(redis_->command({"XGROUP", "CREATE", "events", "relay", "0", "MKSTREAM"}).ok());
  HousekeepingSettings settings;
  settings.refresh_interval = milliseconds(50);
  auto housekeeper = make(settings);
  housekeeper->start();
  EXPECT_TRUE(
      SpawnedProcess::waitUntil([&] { return housekeeper->groupState().exists; }, seconds(10)));
  ASSERT_TRUE(server().stop().ok());
  EXPECT_TRUE(
      SpawnedProcess::waitUntil([&] { return !housekeeper->groupState().exists; }, seconds(10)));
  ASSERT_TRUE(server().start().ok());
  // Persistence is off: the restarted server has no group until the consumer creates it.
  auto redis = server().connect();
  ASSERT_TRUE(redis->command({"XGROUP", "CREATE", "events", "relay", "0", "MKSTREAM"}).ok());
  EXPECT_TRUE(
      SpawnedProcess::waitUntil([&] { return housekeeper->groupState().exists; }, seconds(10)));
  // The failure was counted: as the broken XPENDING, and as reconnects while the server was down.
  EXPECT_GE(metrics_.value("relay_redis_errors_total", {{"op", "xpending"}}) +
                metrics_.value("relay_redis_errors_total", {{"op", "connect"}}),
            1);
}

TEST_F(Housekeeper, ItsThreadPublishesTheReadyBacklogAndDeletesIdleConsumers) {
  ASSERT_TRUE(redis_->command({"XGROUP", "CREATE", "events", "relay", "0", "MKSTREAM"}).ok());
  // A pod that handled a message and went away; three messages nobody read yet.
  auto id = redis_->command({"XADD", "events", "*", "k", "v"});
  ASSERT_TRUE(
      redis_->command({"XREADGROUP", "GROUP", "relay", "gone-pod", "STREAMS", "events", ">"}).ok());
  ASSERT_TRUE(redis_->command({"XACK", "events", "relay", *id->string()}).ok());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(redis_->command({"XADD", "events", "*", "k", "v"}).ok());
  HousekeepingSettings settings;
  settings.refresh_interval = milliseconds(20);
  settings.retention_interval = milliseconds(20);
  settings.consumer = "me";
  settings.idle_consumers.threshold = milliseconds(50);  // the fixed hour, shortened
  auto housekeeper = make(settings);
  housekeeper->start();
  const bool gone = SpawnedProcess::waitUntil(
      [&] {
        auto consumers = redis_->command({"XINFO", "CONSUMERS", "events", "relay"});
        return consumers.ok() && consumers->elements()->empty();
      },
      seconds(10));
  EXPECT_TRUE(gone) << "the idle consumer was not deleted";
  EXPECT_TRUE(SpawnedProcess::waitUntil(
      [&] { return metrics_.exposition().find("relay_ready_backlog 3\n") != std::string::npos; },
      seconds(10)))
      << metrics_.exposition();
  EXPECT_NE(metrics_.exposition().find("relay_idle_consumers_deleted_total 1\n"),
            std::string::npos);
  housekeeper->stop();
}

}  // namespace
}  // namespace relay::worker
