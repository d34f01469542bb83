// The invocation state machine against a real redis-server (events.md "Delivery, retry, and
// ACK", "Invocation state persistence", "Dead-letter queue").
#include "invocation/invocation_store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "common/random.h"
#include "fakes/fake_clock.h"
#include "support/redis_server.h"

namespace relay::invocation {
namespace {

using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;
using Verdict = Claim::Verdict;

class InvocationStoreTest : public testing::RedisTest {
 protected:
  void SetUp() override {
    RedisTest::SetUp();
    redis_ = server().connect();
  }
  std::string marker(const std::string& id = "1-0", const std::string& field = "app/h") {
    auto reply = redis_->command({"HGET", store_.keys().state(id), field});
    EXPECT_TRUE(reply.ok());
    auto text = reply->optionalString();
    return text.ok() && text->has_value() ? std::string(**text) : "<nil>";
  }
  long long ttlOf(const std::string& key) { return *redis_->command({"PTTL", key})->integer(); }
  Claim start(const std::string& field = "app/h", int max_attempts = 3) {
    auto claim = store_.tryStart(*redis_, "1-0", field, max_attempts, seconds(60));
    EXPECT_TRUE(claim.ok()) << claim.error().message;
    return claim.ok() ? *claim : Claim{};
  }
  Transition finish(const Claim& claim, bool succeeded, int max_attempts = 3) {
    auto done =
        store_.complete(*redis_, "1-0", "app/h", claim.token, succeeded, minutes(1), max_attempts);
    EXPECT_TRUE(done.ok()) << done.error().message;
    return done.ok() ? *done : Transition::kStale;
  }
  DlqEntry entry() const {
    DlqEntry e;
    e.original_stream = "events";
    e.original_id = "1-0";
    e.group = "relay";
    e.consumer = "w1";
    e.event = "{}";
    e.reason = "exit 3";
    e.kind = "handler";
    e.app = "app";
    e.handler = "h";
    e.deliveries = 4;
    e.handler_attempts = 3;
    e.timestamp = "2026-11-30T00:00:00Z";
    return e;
  }

  testing::FakeClock clock_;
  SystemRandom random_;
  InvocationStore store_{StreamKeys{"events", "relay"}, clock_, random_};
  std::unique_ptr<redis::Connection> redis_;
};

TEST_F(InvocationStoreTest, FirstDeliveryClaimsAttemptOneAndALiveClaimIsBusy) {
  const Claim first = start();
  EXPECT_EQ(first.verdict, Verdict::kRun);
  EXPECT_EQ(first.attempt, 1);
  EXPECT_EQ(marker().rfind("running:1:" + first.token + ":", 0), 0u) << marker();
  const Claim second = start();
  EXPECT_EQ(second.verdict, Verdict::kBusy);
}

TEST_F(InvocationStoreTest, SuccessIsTerminal) {
  const Claim claim = start();
  EXPECT_EQ(finish(claim, true), Transition::kSucceeded);
  EXPECT_EQ(marker(), "succeeded:1");
  EXPECT_EQ(start().verdict, Verdict::kSucceeded);
}

TEST_F(InvocationStoreTest, RedeliveryBeforeNextAttemptAtSkipsWithoutExecuting) {
  EXPECT_EQ(finish(start(), false), Transition::kFailed);
  const std::int64_t now_ms =
      std::chrono::duration_cast<milliseconds>(clock_.now().time_since_epoch()).count();
  EXPECT_EQ(marker(), "failed:1:" + std::to_string(now_ms + 60'000));
  clock_.advance(seconds(59));
  const Claim early = start();
  EXPECT_EQ(early.verdict, Verdict::kWait);
  EXPECT_EQ(marker(), "failed:1:" + std::to_string(now_ms + 60'000));  // untouched
  clock_.advance(seconds(1));
  const Claim retry = start();
  EXPECT_EQ(retry.verdict, Verdict::kRun);
  EXPECT_EQ(retry.attempt, 2);
}

TEST_F(InvocationStoreTest, LastFailedAttemptExhaustsAndOwesOneDlqEntry) {
  for (int attempt = 1; attempt <= 3; ++attempt) {
    const Claim claim = start();
    ASSERT_EQ(claim.verdict, Verdict::kRun);
    ASSERT_EQ(claim.attempt, attempt);
    EXPECT_EQ(finish(claim, false), attempt < 3 ? Transition::kFailed : Transition::kExhausted);
    clock_.advance(minutes(1));
  }
  const Claim after = start();
  EXPECT_EQ(after.verdict, Verdict::kExhausted);
  EXPECT_EQ(after.attempt, 3);
  auto written = store_.writeDlq(*redis_, "1-0", "app/h", entry());
  ASSERT_TRUE(written.ok()) << written.error().message;
  EXPECT_EQ(*written, Transition::kWritten);
  EXPECT_EQ(marker().substr(marker().size() - 4), ":dlq");
  // A redelivery writes nothing more: the marker says the entry exists.
  EXPECT_EQ(*store_.writeDlq(*redis_, "1-0", "app/h", entry()), Transition::kExists);
  EXPECT_EQ(*redis_->command({"XLEN", "relay:events:dlq"})->integer(), 1);
  EXPECT_EQ(start().verdict, Verdict::kDlqWritten);
}

TEST_F(InvocationStoreTest, DlqEntryCarriesEveryDocumentedField) {
  ASSERT_EQ(*store_.writeDlq(*redis_, "1-0", std::string(kMalformedField), entry()),
            Transition::kWritten);
  auto range = redis_->command({"XRANGE", "relay:events:dlq", "-", "+"});
  ASSERT_TRUE(range.ok());
  const auto fields = range->at(0)->at(1)->elements();
  ASSERT_TRUE(fields.ok());
  std::vector<std::string> names;
  for (std::size_t i = 0; i < fields->size(); i += 2) {
    names.emplace_back(*(*fields)[i].string());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"original_stream", "original_id", "group", "consumer",
                                             "event", "reason", "kind", "app", "handler",
                                             "deliveries", "handler_attempts", "timestamp"}));
  EXPECT_EQ(marker("1-0", "-/-"), "exhausted:0:-:dlq");
  EXPECT_EQ(*store_.writeDlq(*redis_, "1-0", std::string(kMalformedField), entry()),
            Transition::kExists);
}

TEST_F(InvocationStoreTest, StaleTokenCannotOverwriteNewerState) {
  const Claim mine = start();
  clock_.advance(seconds(61));  // my claim expired: a replica takes over
  const Claim theirs = start();
  ASSERT_EQ(theirs.verdict, Verdict::kRun);
  EXPECT_EQ(theirs.attempt, 2);  // the expired attempt counts as executed
  EXPECT_EQ(finish(mine, true), Transition::kStale);
  EXPECT_EQ(marker().rfind("running:2:" + theirs.token, 0), 0u) << marker();
  EXPECT_EQ(finish(theirs, true), Transition::kSucceeded);
}

TEST_F(InvocationStoreTest, ExpiredClaimOnTheLastAttemptExhausts) {
  start("app/h", 1);
  clock_.advance(minutes(2));
  const Claim next = start("app/h", 1);
  EXPECT_EQ(next.verdict, Verdict::kExhausted);
  EXPECT_EQ(next.attempt, 1);
}

TEST_F(InvocationStoreTest, ReleaseGivesTheAttemptBack) {
  const Claim claim = start();
  auto released = store_.release(*redis_, "1-0", "app/h", claim.token);
  ASSERT_TRUE(released.ok());
  EXPECT_EQ(*released, Transition::kReleased);
  EXPECT_EQ(marker(), "<nil>");
  EXPECT_EQ(start().attempt, 1);
}

TEST_F(InvocationStoreTest, ReleaseAfterARetryRestoresTheFailedCount) {
  finish(start(), false);
  clock_.advance(minutes(1));
  const Claim second = start();
  ASSERT_EQ(second.attempt, 2);
  ASSERT_EQ(*store_.release(*redis_, "1-0", "app/h", second.token), Transition::kReleased);
  EXPECT_EQ(marker(), "failed:1:0");
  EXPECT_EQ(start().attempt, 2);
}

TEST_F(InvocationStoreTest, StateHasNoTtlUntilTheMessageLeavesThePel) {
  ASSERT_TRUE(redis_->command({"XGROUP", "CREATE", "events", "relay", "$", "MKSTREAM"}).ok());
  const std::string id(*redis_->command({"XADD", "events", "*", "event", "{}"})->string());
  ASSERT_TRUE(
      redis_->command({"XREADGROUP", "GROUP", "relay", "w1", "STREAMS", "events", ">"}).ok());
  auto claim = store_.tryStart(*redis_, id, "app/h", 3, seconds(60));
  ASSERT_EQ(claim->verdict, Verdict::kRun);
  ASSERT_EQ(*store_.complete(*redis_, id, "app/h", claim->token, true, minutes(1), 3),
            Transition::kSucceeded);
  const std::string key = store_.keys().state(id);
  EXPECT_EQ(ttlOf(key), -1);  // pending: persistent
  auto acked = store_.ackAndRetain(*redis_, id, std::chrono::hours(24 * 7));
  ASSERT_TRUE(acked.ok()) << acked.error().message;
  EXPECT_TRUE(*acked);
  EXPECT_GT(ttlOf(key), std::chrono::duration_cast<milliseconds>(std::chrono::hours(167)).count());
  EXPECT_EQ(*redis_->command({"XPENDING", "events", "relay"})->at(0)->integer(), 0);
  EXPECT_EQ(*redis_->command({"HGET", key, "relay:retained"})->string(), "1");
}

TEST_F(InvocationStoreTest, RetainedStateIsInertForStaleDeliveries) {
  const Claim stale = start();
  ASSERT_TRUE(store_.ackAndRetain(*redis_, "1-0", seconds(100)).ok());
  const std::string key = store_.keys().state("1-0");
  ASSERT_TRUE(redis_->command({"PEXPIRE", key, "50000"}).ok());
  const std::string before = marker();
  EXPECT_EQ(start().verdict, Verdict::kRetained);
  EXPECT_EQ(finish(stale, true), Transition::kRetained);
  EXPECT_EQ(*store_.release(*redis_, "1-0", "app/h", stale.token), Transition::kRetained);
  EXPECT_EQ(*store_.writeDlq(*redis_, "1-0", "app/h", entry()), Transition::kRetained);
  ASSERT_TRUE(store_.ackAndRetain(*redis_, "1-0", seconds(100)).ok());
  EXPECT_EQ(marker(), before);
  const long long ttl = ttlOf(key);
  EXPECT_GT(ttl, 0);
  EXPECT_LE(ttl, 50000);  // neither removed nor extended
}

TEST_F(InvocationStoreTest, ZeroRetentionKeepsTheStateForever) {
  finish(start(), true);
  ASSERT_TRUE(store_.ackAndRetain(*redis_, "1-0", milliseconds(0)).ok());
  EXPECT_EQ(ttlOf(store_.keys().state("1-0")), -1);
  EXPECT_EQ(start().verdict, Verdict::kRetained);
}

TEST_F(InvocationStoreTest, RacingReplicasNeverBothRunTheSameAttempt) {
  constexpr int kReplicas = 8;
  std::atomic<int> runs{0};
  std::vector<std::thread> replicas;
  for (int i = 0; i < kReplicas; ++i) {
    replicas.emplace_back([&] {
      auto connection = server().connect();
      auto claim = store_.tryStart(*connection, "1-0", "app/h", 3, seconds(60));
      if (claim.ok() && claim->verdict == Verdict::kRun) runs.fetch_add(1);
    });
  }
  for (std::thread& replica : replicas) replica.join();
  EXPECT_EQ(runs.load(), 1);
}

TEST_F(InvocationStoreTest, CorruptStateIsReportedNotOverwritten) {
  ASSERT_TRUE(redis_->command({"HSET", store_.keys().state("1-0"), "app/h", "garbage"}).ok());
  auto claim = store_.tryStart(*redis_, "1-0", "app/h", 3, seconds(60));
  ASSERT_FALSE(claim.ok());
  EXPECT_EQ(claim.error().kind, redis::ErrorKind::kProtocol);
  EXPECT_NE(claim.error().message.find("corrupt"), std::string::npos);
  EXPECT_EQ(marker(), "garbage");
}

}  // namespace
}  // namespace relay::invocation
