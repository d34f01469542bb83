// Why each pending message is pending, read from a real redis-server (docs/operations.md
// "Pending messages"): the inspector behind `relay pending ls`, `relay health`, the console's
// overview and the housekeeper's metrics.
#include "stream/pending_inspector.h"

#include <gtest/gtest.h>

#include "fakes/fake_catalog.h"
#include "support/redis_server.h"

namespace relay::stream {
namespace {

class PendingInspection : public relay::testing::RedisTest {
 protected:
  void SetUp() override {
    RedisTest::SetUp();
    redis_ = server().connect();
    ASSERT_TRUE(redis_->command({"XGROUP", "CREATE", "events", "relay", "0", "MKSTREAM"}).ok());
    for (const char* id : {"1000-0", "2000-0", "3000-0"}) {
      ASSERT_TRUE(redis_->command({"XADD", "events", id, "event", "{}"}).ok());
    }
    ASSERT_TRUE(redis_
                    ->command({"XREADGROUP", "GROUP", "relay", "worker-a", "COUNT", "10", "STREAMS",
                               "events", ">"})
                    .ok());
    ASSERT_TRUE(redis_->command({"SET", keys_.heartbeat("worker-a"), "{}"}).ok());
  }
  std::int64_t redisNow() {
    auto time = redis_->command({"TIME"});
    return std::stoll(std::string(*time->at(0)->string())) * 1000;
  }
  void state(const std::string& id, std::vector<std::string> fields) {
    std::vector<std::string> command = {"HSET", keys_.state(id)};
    command.insert(command.end(), fields.begin(), fields.end());
    ASSERT_TRUE(redis_->command(command).ok());
  }

  invocation::StreamKeys keys_{"events", "relay"};
  std::unique_ptr<redis::Connection> redis_;
  const std::string plan_ = "e 3 30000 shop/bin/pay.sh\n";
};

TEST_F(PendingInspection, ExplainsEachPendingMessageOldestFirst) {
  const std::int64_t now = redisNow();
  state("2000-0", {"relay:plan", plan_, "shop/bin/pay.sh",
                   "failed:1:" + std::to_string(now + 600'000) + ":tok"});
  ASSERT_TRUE(redis_->command({"ZADD", keys_.due(), std::to_string(now + 600'000), "2000-0"}).ok());
  state("3000-0",
        {"relay:plan", plan_, "shop/bin/pay.sh", "running:2:tok:" + std::to_string(now + 60'000)});
  const PendingInspector inspector(keys_);
  auto reports = inspector.page(*redis_, "", 10, /*payloads=*/true);
  ASSERT_TRUE(reports.ok()) << reports.error().message;
  ASSERT_EQ(reports->size(), 3u);
  EXPECT_EQ((*reports)[0].entry.id, "1000-0");
  EXPECT_EQ((*reports)[0].reason.kind, PendingKind::kNoState);
  EXPECT_TRUE((*reports)[0].owner_alive);
  EXPECT_EQ((*reports)[0].payload_exists, true);
  EXPECT_GT((*reports)[0].age_ms, now - 2000);
  EXPECT_EQ((*reports)[1].reason.kind, PendingKind::kRetryWait);
  EXPECT_EQ((*reports)[1].due_at_ms, now + 600'000);
  EXPECT_EQ((*reports)[2].reason.kind, PendingKind::kRunning);
  EXPECT_EQ((*reports)[2].reason.attempt, 2);
  EXPECT_EQ((*reports)[2].entry.consumer, "worker-a");
  EXPECT_EQ((*reports)[2].entry.deliveries, 1);
  // Paging on from an id, and the oldest alone.
  auto rest = inspector.page(*redis_, "1000-0", 1, false);
  ASSERT_TRUE(rest.ok());
  ASSERT_EQ(rest->size(), 1u);
  EXPECT_EQ(rest->front().entry.id, "2000-0");
  EXPECT_FALSE(rest->front().payload_exists);  // not read
  auto oldest = inspector.oldest(*redis_);
  ASSERT_TRUE(oldest.ok());
  ASSERT_TRUE(*oldest);
  EXPECT_EQ((*oldest)->entry.id, "1000-0");
}

// A payload is read only to see that it exists, cut as it streams in (docs/operations.md
// "Memory"): a huge one is still found, never pulled whole.
TEST_F(PendingInspection, AHugePayloadIsFoundWithoutBeingReadWhole) {
  ASSERT_TRUE(
      redis_->command({"XADD", "events", "4000-0", "event", std::string(8 << 20, 'x')}).ok());
  ASSERT_TRUE(redis_
                  ->command({"XREADGROUP", "GROUP", "relay", "worker-a", "COUNT", "10", "STREAMS",
                             "events", ">"})
                  .ok());
  auto found = PendingInspector(keys_).find(*redis_, {"4000-0", "1000-0"}, /*payloads=*/true);
  ASSERT_TRUE(found.ok()) << found.error().message;
  ASSERT_EQ(found->size(), 2u);
  for (const auto& report : *found) {
    ASSERT_TRUE(report);
    EXPECT_TRUE(report->payload_exists);
  }
}

TEST_F(PendingInspection, FindsMessagesByIdAndSaysWhichAreNotPending) {
  const PendingInspector inspector(keys_);
  auto found = inspector.find(*redis_, {"3000-0", "9000-0"}, /*payloads=*/true);
  ASSERT_TRUE(found.ok()) << found.error().message;
  ASSERT_EQ(found->size(), 2u);
  ASSERT_TRUE((*found)[0]);
  EXPECT_EQ((*found)[0]->entry.id, "3000-0");
  EXPECT_FALSE((*found)[1]);
}

TEST_F(PendingInspection, ParkedMessagesWaitInTheirIndexOrAreStuck) {
  // Parked for a paused app: the paused queue holds it.
  state("1000-0", {"relay:plan", plan_});
  ASSERT_TRUE(redis_->command({"SADD", keys_.paused(), "shop"}).ok());
  ASSERT_TRUE(redis_->command({"ZADD", keys_.pausedQueue(), "0", "shop\n1000-0"}).ok());
  // Parked for a retry whose due-index entry is gone: stuck.
  state("2000-0", {"relay:plan", "e 3 30000 mail/bin/send.sh\n", "mail/bin/send.sh",
                   "failed:1:" + std::to_string(redisNow() + 600'000) + ":tok"});
  for (const char* id : {"1000-0", "2000-0"}) {
    ASSERT_TRUE(redis_
                    ->command({"XCLAIM", "events", "relay",
                               std::string(invocation::kParkingConsumer), "0", id, "JUSTID"})
                    .ok());
  }
  const PendingInspector inspector(keys_);
  auto reports = inspector.page(*redis_, "", 2, false);
  ASSERT_TRUE(reports.ok()) << reports.error().message;
  ASSERT_EQ(reports->size(), 2u);
  EXPECT_TRUE((*reports)[0].parked);
  EXPECT_EQ((*reports)[0].reason.kind, PendingKind::kPaused);
  EXPECT_EQ((*reports)[1].reason.kind, PendingKind::kParked);
  EXPECT_NE(describe((*reports)[1]).find("nothing takes it back"), std::string::npos);
}

TEST_F(PendingInspection, UnreadableStateAndMissingPayloadsAreReportedNotFatal) {
  ASSERT_TRUE(redis_->command({"SET", keys_.state("1000-0"), "not a hash"}).ok());
  ASSERT_TRUE(redis_->command({"XDEL", "events", "2000-0"}).ok());
  ASSERT_TRUE(redis_->command({"DEL", keys_.heartbeat("worker-a")}).ok());
  const PendingInspector inspector(keys_);
  auto reports = inspector.page(*redis_, "", 3, true);
  ASSERT_TRUE(reports.ok()) << reports.error().message;
  EXPECT_EQ((*reports)[0].reason.kind, PendingKind::kCorrupt);
  EXPECT_NE((*reports)[0].reason.detail.find("WRONGTYPE"), std::string::npos);
  EXPECT_EQ((*reports)[1].payload_exists, false);
  EXPECT_FALSE((*reports)[1].owner_alive);
}

TEST_F(PendingInspection, TheWorkersCatalogNamesAnAppItDoesNotKnow) {
  state("1000-0", {"relay:plan", plan_});
  relay::testing::FakeCatalog catalog;
  catalog.app("other", {"bin/x.sh"});
  auto oldest = PendingInspector(keys_, &catalog).oldest(*redis_);
  ASSERT_TRUE(oldest.ok());
  EXPECT_EQ((*oldest)->reason.kind, PendingKind::kUnknownApp);
  EXPECT_EQ((*oldest)->reason.app, "shop");
}

TEST_F(PendingInspection, NothingPendingIsNoOldestAndAMissingGroupIsAnError) {
  ASSERT_TRUE(redis_->command({"XACK", "events", "relay", "1000-0", "2000-0", "3000-0"}).ok());
  auto none = PendingInspector(keys_).oldest(*redis_);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(*none);
  auto missing = PendingInspector({"events", "nobody"}).oldest(*redis_);
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(redis::isReplyError(missing.error(), "NOGROUP"));
}

}  // namespace
}  // namespace relay::stream
