// `relay pending dead-letter` and `ack` in Redis (docs/cli.md "relay pending"): the one script
// that writes the owed DLQ entries and acknowledges with retention, against a real
// redis-server.
#include "invocation/pending_resolver.h"

#include <gtest/gtest.h>

#include <map>

#include "support/redis_server.h"

namespace relay::invocation {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;

constexpr const char* kStamp = "2026-01-01T10:00:00Z";

class PendingResolution : public relay::testing::RedisTest {
 protected:
  void SetUp() override {
    RedisTest::SetUp();
    redis_ = server().connect();
    ASSERT_TRUE(redis_->command({"XGROUP", "CREATE", "events", "relay", "0", "MKSTREAM"}).ok());
    ASSERT_TRUE(
        redis_
            ->command({"XADD", "events", "5-0", "event", R"({"kind":"order"})", "traceparent",
                       "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"})
            .ok());
    ASSERT_TRUE(
        redis_->command({"XREADGROUP", "GROUP", "relay", "worker-a", "STREAMS", "events", ">"})
            .ok());
  }
  std::int64_t now() {
    auto time = redis_->command({"TIME"});
    return std::stoll(std::string(*time->at(0)->string())) * 1000;
  }
  void state(std::vector<std::string> fields) {
    std::vector<std::string> command = {"HSET", keys_.state("5-0")};
    command.insert(command.end(), fields.begin(), fields.end());
    ASSERT_TRUE(redis_->command(command).ok());
  }
  std::string field(const std::string& name) {
    auto value = redis_->command({"HGET", keys_.state("5-0"), name});
    return value.ok() && !value->isNil() ? std::string(*value->string()) : "";
  }
  long long pending() {
    return *redis_->command({"XPENDING", "events", "relay"})->at(0)->integer();
  }
  std::vector<std::map<std::string, std::string>> dlq() {
    std::vector<std::map<std::string, std::string>> entries;
    auto reply = redis_->command({"XRANGE", keys_.dlq(), "-", "+"});
    for (std::size_t i = 0; reply.ok() && i < reply->size(); ++i) {
      auto fields = reply->at(i)->at(1);
      std::map<std::string, std::string> entry;
      for (std::size_t f = 0; f + 1 < fields->size(); f += 2) {
        entry[std::string(*fields->at(f)->string())] = std::string(*fields->at(f + 1)->string());
      }
      entries.push_back(std::move(entry));
    }
    return entries;
  }
  redis::Result<ResolveVerdict> resolve(Resolution resolution, bool force = false,
                                        milliseconds retention = hours(1)) {
    return PendingResolver(keys_, retention).resolve(*redis_, "5-0", resolution, force, kStamp);
  }

  StreamKeys keys_{"events", "relay"};
  std::unique_ptr<redis::Connection> redis_;
};

TEST_F(PendingResolution, DeadLettersEveryInvocationItStillOwesThenAcknowledgesWithRetention) {
  state({"relay:plan", "e 3 1000 shop/a\ne 2 1000 shop/b\ne 1 1000 mail/c\n", "shop/a",
         "succeeded:1:t", "shop/b", "failed:1:" + std::to_string(now() + 60'000) + ":t",
         "relay:reason:shop/b", "exit 3", "relay:tail:shop/b", "[shop/b] boom\n"});
  ASSERT_TRUE(redis_->command({"ZADD", keys_.due(), "1", "5-0"}).ok());
  ASSERT_TRUE(redis_->command({"ZADD", keys_.pausedQueue(), "0", "mail\n5-0"}).ok());
  auto verdict = resolve(Resolution::kDeadLetter);
  ASSERT_TRUE(verdict.ok()) << verdict.error().message;
  EXPECT_EQ(verdict->kind, ResolveVerdict::Kind::kResolved);
  EXPECT_EQ(verdict->written, (std::vector<std::string>{"shop/b", "mail/c"}));
  const auto entries = dlq();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].at("kind"), "operator");
  EXPECT_EQ(entries[0].at("app"), "shop");
  EXPECT_EQ(entries[0].at("handler"), "b");
  EXPECT_EQ(entries[0].at("reason"), "operator: attempt 1 failed");
  EXPECT_EQ(entries[0].at("exit_reason"), "exit 3");
  EXPECT_EQ(entries[0].at("output_tail"), "[shop/b] boom\n");
  EXPECT_EQ(entries[0].at("handler_attempts"), "1");
  EXPECT_EQ(entries[0].at("deliveries"), "1");
  EXPECT_EQ(entries[0].at("consumer"), "worker-a");
  EXPECT_EQ(entries[0].at("event"), R"({"kind":"order"})");
  EXPECT_EQ(entries[0].at("original_id"), "5-0");
  EXPECT_EQ(entries[0].at("timestamp"), kStamp);
  EXPECT_EQ(entries[0].at("trace"), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
  EXPECT_EQ(entries[1].at("app"), "mail");
  EXPECT_EQ(entries[1].at("reason"), "operator: never started");
  EXPECT_EQ(entries[1].at("handler_attempts"), "0");
  EXPECT_EQ(entries[1].count("exit_reason"), 0u);
  // Acknowledged and retained in the same step; out of every index.
  EXPECT_EQ(pending(), 0);
  EXPECT_EQ(field("relay:retained"), "1");
  EXPECT_EQ(field("relay:operator"), std::string("dead-letter ") + kStamp);
  EXPECT_EQ(field("shop/b"), "exhausted:1:operator:dlq");
  EXPECT_EQ(field("mail/c"), "exhausted:0:operator:dlq");
  EXPECT_EQ(field("shop/a"), "succeeded:1:t");
  const long long ttl = *redis_->command({"PTTL", keys_.state("5-0")})->integer();
  EXPECT_GT(ttl, 3'500'000);
  EXPECT_LE(ttl, 3'600'000);
  EXPECT_EQ(*redis_->command({"ZCARD", keys_.due()})->integer(), 0);
  EXPECT_EQ(*redis_->command({"ZCARD", keys_.pausedQueue()})->integer(), 0);
  EXPECT_EQ(std::string(*redis_->command({"HGET", keys_.stats(), "shop/b:dlq"})->string()), "1");
  // Done is done: a repeat finds nothing pending and changes nothing.
  auto again = resolve(Resolution::kDeadLetter);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->kind, ResolveVerdict::Kind::kNotPending);
  EXPECT_EQ(dlq().size(), 2u);
}

TEST_F(PendingResolution, AMessageWithoutAPlanGetsOneDashEntryAndARetainedState) {
  auto verdict = resolve(Resolution::kDeadLetter, false, milliseconds(0));
  ASSERT_TRUE(verdict.ok()) << verdict.error().message;
  EXPECT_EQ(verdict->written, (std::vector<std::string>{"-/-"}));
  const auto entries = dlq();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].at("app"), "-");
  EXPECT_EQ(entries[0].at("handler"), "-");
  EXPECT_EQ(entries[0].at("kind"), "operator");
  EXPECT_EQ(entries[0].at("reason"), "operator: no plan: never started");
  EXPECT_EQ(pending(), 0);
  // Retained although there was no state: a worker still holding it finds it finished.
  EXPECT_EQ(field("relay:retained"), "1");
  EXPECT_EQ(*redis_->command({"PTTL", keys_.state("5-0")})->integer(), -1);  // retention 0
}

TEST_F(PendingResolution, ALiveClaimIsRefusedUnlessForced) {
  const std::int64_t deadline = now() + 60'000;
  state({"relay:plan", "e 3 1000 shop/a\n", "shop/a", "running:2:t:" + std::to_string(deadline)});
  auto held = resolve(Resolution::kAcknowledge);
  ASSERT_TRUE(held.ok()) << held.error().message;
  EXPECT_EQ(held->kind, ResolveVerdict::Kind::kHeld);
  EXPECT_EQ(held->field, "shop/a");
  EXPECT_EQ(held->claim, "running");
  EXPECT_EQ(held->owner, "worker-a");
  EXPECT_EQ(held->until_ms, deadline);
  EXPECT_EQ(pending(), 1);
  EXPECT_EQ(field("relay:retained"), "");
  auto forced = resolve(Resolution::kDeadLetter, /*force=*/true);
  ASSERT_TRUE(forced.ok());
  EXPECT_EQ(forced->kind, ResolveVerdict::Kind::kResolved);
  ASSERT_EQ(dlq().size(), 1u);
  EXPECT_EQ(dlq()[0].at("reason"), "operator: running attempt 2 (forced)");
  EXPECT_EQ(dlq()[0].at("handler_attempts"), "2");
  EXPECT_EQ(pending(), 0);
}

TEST_F(PendingResolution, AClaimWhoseHandlerHasNotStartedIsLiveToo) {
  const std::int64_t deadline = now() + 60'000;
  state({"relay:plan", "e 3 1000 shop/a\n", "shop/a", "claimed:2:t:" + std::to_string(deadline)});
  auto held = resolve(Resolution::kDeadLetter);
  ASSERT_TRUE(held.ok()) << held.error().message;
  EXPECT_EQ(held->kind, ResolveVerdict::Kind::kHeld);
  EXPECT_EQ(held->claim, "claimed");
  auto forced = resolve(Resolution::kDeadLetter, /*force=*/true);
  ASSERT_TRUE(forced.ok());
  ASSERT_EQ(dlq().size(), 1u);
  EXPECT_EQ(dlq()[0].at("reason"), "operator: claimed for attempt 2 (forced)");
  EXPECT_EQ(dlq()[0].at("handler_attempts"), "1");  // attempt 2 never started
}

TEST_F(PendingResolution, AnExpiredClaimIsNoLongerLive) {
  state({"relay:plan", "e 3 1000 shop/a\n", "shop/a", "running:1:t:1000"});
  auto acked = resolve(Resolution::kAcknowledge);
  ASSERT_TRUE(acked.ok());
  EXPECT_EQ(acked->kind, ResolveVerdict::Kind::kResolved);
}

TEST_F(PendingResolution, AcknowledgingWritesNoEntry) {
  state({"relay:plan", "e 3 1000 shop/a\n", "shop/a", "failed:1:1:t"});
  auto acked = resolve(Resolution::kAcknowledge);
  ASSERT_TRUE(acked.ok()) << acked.error().message;
  EXPECT_EQ(acked->kind, ResolveVerdict::Kind::kResolved);
  EXPECT_TRUE(acked->written.empty());
  EXPECT_TRUE(dlq().empty());
  EXPECT_EQ(pending(), 0);
  EXPECT_EQ(field("relay:retained"), "1");
  EXPECT_EQ(field("relay:operator"), std::string("ack ") + kStamp);
  EXPECT_EQ(field("shop/a"), "failed:1:1:t");  // its state as it was
}

TEST_F(PendingResolution, ARetainedButPendingMessageIsAcknowledgedWithoutAnEntry) {
  state({"relay:plan", "e 3 1000 shop/a\n", "shop/a", "succeeded:1:t", "relay:retained", "1"});
  auto verdict = resolve(Resolution::kDeadLetter);
  ASSERT_TRUE(verdict.ok());
  EXPECT_EQ(verdict->kind, ResolveVerdict::Kind::kRetained);
  EXPECT_TRUE(dlq().empty());
  EXPECT_EQ(pending(), 0);
}

TEST_F(PendingResolution, AnUnwritableDlqAcknowledgesNothing) {
  state({"relay:plan", "e 3 1000 shop/a\n"});
  ASSERT_TRUE(redis_->command({"SET", keys_.dlq(), "not a stream"}).ok());
  auto failed = resolve(Resolution::kDeadLetter);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.error().message.find("cannot be written"), std::string::npos)
      << failed.error().message;
  EXPECT_EQ(pending(), 1);
  EXPECT_EQ(field("relay:retained"), "");
  EXPECT_EQ(field("shop/a"), "");
}

}  // namespace
}  // namespace relay::invocation
