// The ready backlog (docs/operations.md "Ready backlog") read from a real redis-server holding
// what the lifecycle leaves there: a group's lag and PEL, the parking consumer's messages and the
// indexes they wait on (the due-retry index, a paused app's queue).
#include "invocation/ready_backlog.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/redis_server.h"

namespace relay::invocation {
namespace {

class ReadyBacklogTest : public relay::testing::RedisTest {
 protected:
  void SetUp() override {
    RedisTest::SetUp();
    redis_ = server().connect();
    ASSERT_TRUE(redis_->command({"XGROUP", "CREATE", "events", "relay", "0", "MKSTREAM"}).ok());
  }
  std::string add() {
    return std::string(*redis_->command({"XADD", "events", "*", "event", "{}"})->string());
  }
  /// Delivers the next `count` messages to consumer `who`; their ids.
  std::vector<std::string> deliver(int count, const std::string& who = "w1") {
    auto reply = redis_->command({"XREADGROUP", "GROUP", "relay", who, "COUNT",
                                  std::to_string(count), "STREAMS", "events", ">"});
    std::vector<std::string> ids;
    auto streams = reply->elements();
    auto stream = (*streams)[0].at(1);
    auto entries = stream->elements();
    for (const auto entry : *entries) ids.emplace_back(*entry.at(0)->string());
    return ids;
  }
  long long redisMs() {
    auto time = redis_->command({"TIME"});
    return std::stoll(std::string(*time->at(0)->string())) * 1000;
  }
  /// What start() does with a message that cannot start now (docs/pipeline.md "Waiting"): the
  /// parking consumer takes it over; `due_ms` (0: none) indexes it for its next attempt, `app`
  /// (empty: none) queues it for a paused app.
  void park(const std::string& id, long long due_ms, const std::string& app = "") {
    if (due_ms > 0) {
      ASSERT_TRUE(redis_->command({"ZADD", keys_.due(), std::to_string(due_ms), id}).ok());
    }
    if (!app.empty()) {
      ASSERT_TRUE(redis_->command({"ZADD", keys_.pausedQueue(), "0", app + "\n" + id}).ok());
    }
    ASSERT_TRUE(redis_
                    ->command({"XCLAIM", "events", "relay", std::string(kParkingConsumer), "0", id,
                               "JUSTID"})
                    .ok());
  }
  ReadyBacklog read(ReadyBacklogSettings settings = {}) {
    auto backlog = ReadyBacklogReader(keys_, settings).read(*redis_);
    EXPECT_TRUE(backlog.ok()) << backlog.error().message;
    return backlog.ok() ? *backlog : ReadyBacklog{};
  }

  StreamKeys keys_{"events", "relay"};
  std::unique_ptr<redis::Connection> redis_;
};

TEST_F(ReadyBacklogTest, LagPlusPendingLessWhatWaitsForABackoffOrAPause) {
  for (int i = 0; i < 6; ++i) add();
  const auto ids = deliver(4);  // lag 2, pending 4
  const long long now = redisMs();
  park(ids[0], now + 120'000);  // a retry waiting for its backoff
  park(ids[1], now - 1'000);    // a retry due already: the poller takes it back
  park(ids[2], 0, "shop");      // held by a paused app
  // ids[3] stays with the worker that runs it.
  const ReadyBacklog backlog = read();
  EXPECT_EQ(backlog.lag, 2);
  EXPECT_EQ(backlog.pending, 4);
  EXPECT_EQ(backlog.parked, 3);
  EXPECT_EQ(backlog.waiting_backoff, 1);
  EXPECT_EQ(backlog.waiting_pause, 1);
  EXPECT_EQ(backlog.ready(), 2 + 4 - 1 - 1);
}

TEST_F(ReadyBacklogTest, AResumeMakesThePausedMessagesReadyAgain) {
  add();
  const auto ids = deliver(1);
  park(ids[0], 0, "shop");
  EXPECT_EQ(read().ready(), 0);
  // The resume moves the paused queue to the due index, due now.
  ASSERT_TRUE(redis_->command({"DEL", keys_.pausedQueue()}).ok());
  ASSERT_TRUE(redis_->command({"ZADD", keys_.due(), std::to_string(redisMs()), ids[0]}).ok());
  EXPECT_EQ(read().ready(), 1);
}

TEST_F(ReadyBacklogTest, AMessageWaitingForABackoffAndAPauseIsSubtractedOnce) {
  add();
  const auto ids = deliver(1);
  park(ids[0], redisMs() + 60'000, "shop");
  const ReadyBacklog backlog = read();
  EXPECT_EQ(backlog.waiting_backoff, 1);
  EXPECT_EQ(backlog.waiting_pause, 0);
  EXPECT_EQ(backlog.ready(), 0);
}

TEST_F(ReadyBacklogTest, UnknownLagIsCountedFromTheLastDeliveredEntry) {
  add();
  deliver(1);
  const std::string gone = add();
  add();
  add();
  // A deletion in the undelivered range: Redis can no longer tell the lag.
  ASSERT_TRUE(redis_->command({"XDEL", "events", gone}).ok());
  const ReadyBacklog backlog = read();
  EXPECT_TRUE(backlog.lag_counted);
  EXPECT_EQ(backlog.lag, 2);
  EXPECT_EQ(backlog.ready(), 3);
}

TEST_F(ReadyBacklogTest, NoGroupIsNotFound) {
  auto backlog = ReadyBacklogReader({"other", "relay"}).read(*redis_);
  ASSERT_FALSE(backlog.ok());
  EXPECT_EQ(backlog.error().kind, ErrorKind::kNotFound);
}

}  // namespace
}  // namespace relay::invocation
