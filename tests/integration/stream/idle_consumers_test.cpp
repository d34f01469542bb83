// Deleting the consumers a group accumulates (issue 30: pods come and go under new names)
// against a real redis-server: only those idle past the threshold with nothing pending, never
// the worker's own.
#include "stream/idle_consumers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "support/redis_server.h"

namespace relay::stream {
namespace {

using std::chrono::milliseconds;

class IdleConsumersTest : public relay::testing::RedisTest {
 protected:
  void SetUp() override {
    RedisTest::SetUp();
    redis_ = server().connect();
    ASSERT_TRUE(redis_->command({"XGROUP", "CREATE", "events", "relay", "0", "MKSTREAM"}).ok());
  }
  /// `who` reads a new message (which makes the consumer) and acknowledges it unless `keep`,
  /// as a worker does that handled it; with `keep` it stays pending.
  void read(const std::string& who, bool keep = false) {
    auto id = redis_->command({"XADD", "events", "*", "k", "v"});
    ASSERT_TRUE(id.ok());
    ASSERT_TRUE(
        redis_
            ->command({"XREADGROUP", "GROUP", "relay", who, "COUNT", "1", "STREAMS", "events", ">"})
            .ok());
    if (!keep) {
      ASSERT_TRUE(redis_->command({"XACK", "events", "relay", *id->string()}).ok());
    }
  }
  std::vector<std::string> consumers() {
    std::vector<std::string> names;
    auto reply = redis_->command({"XINFO", "CONSUMERS", "events", "relay"});
    auto rows = reply->elements();
    for (const auto consumer : *rows) names.emplace_back(*consumer.at(1)->string());
    std::sort(names.begin(), names.end());
    return names;
  }
  IdleConsumers make(milliseconds threshold, const std::string& self = "me") {
    IdleConsumers::Settings settings;
    settings.threshold = threshold;
    return IdleConsumers({"events", "relay"}, self, settings);
  }

  std::unique_ptr<redis::Connection> redis_;
};

TEST_F(IdleConsumersTest, OnlyConsumersIdlePastTheThresholdWithNothingPendingGo) {
  read("gone-pod");                 // idle, nothing pending
  read("busy-pod", /*keep=*/true);  // idle, but holds two pending messages
  read("busy-pod", /*keep=*/true);
  read("me");            // the worker itself
  read("relay:parked");  // the parking consumer, empty now
  std::this_thread::sleep_for(milliseconds(60));
  read("fresh-pod");  // read just now
  auto deleted = make(milliseconds(50)).deleteIdle(*redis_);
  ASSERT_TRUE(deleted.ok()) << deleted.error().message;
  EXPECT_EQ(*deleted, std::vector<std::string>{"gone-pod"});
  EXPECT_EQ(consumers(), (std::vector<std::string>{"busy-pod", "fresh-pod", "me", "relay:parked"}));
  // The busy consumer's messages are still pending.
  auto pending = redis_->command({"XPENDING", "events", "relay"});
  EXPECT_EQ(*pending->at(0)->integer(), 2);
}

TEST_F(IdleConsumersTest, NothingGoesBeforeTheThreshold) {
  read("gone-pod");
  auto deleted = make(std::chrono::hours(1)).deleteIdle(*redis_);
  ASSERT_TRUE(deleted.ok());
  EXPECT_TRUE(deleted->empty());
  EXPECT_EQ(consumers(), std::vector<std::string>{"gone-pod"});
}

TEST_F(IdleConsumersTest, AMissingGroupOrStreamDeletesNothing) {
  auto deleted = IdleConsumers({"nowhere", "relay"}, "me", {}).deleteIdle(*redis_);
  ASSERT_TRUE(deleted.ok()) << deleted.error().message;
  EXPECT_TRUE(deleted->empty());
}

}  // namespace
}  // namespace relay::stream
