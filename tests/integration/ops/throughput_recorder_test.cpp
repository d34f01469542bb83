// The per-minute throughput counters against a real redis-server: what workers write and what
// the console reads back; the attempt journal's codec (the journal itself is a LifecycleStore
// verb: tests/contract/lifecycle_store_contract.h).
#include "stream/throughput_recorder.h"

#include <gtest/gtest.h>

#include "fakes/fake_clock.h"
#include "invocation/attempt_journal.h"
#include "support/redis_server.h"

namespace relay::stream {
namespace {

using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

class ThroughputTest : public relay::testing::RedisTest {
 protected:
  void SetUp() override {
    RedisTest::SetUp();
    redis_ = server().connect();
    clock_.setWall(WallTime(std::chrono::hours(490'000)));  // a whole minute
  }
  std::int64_t minuteNow() const {
    return std::chrono::duration_cast<seconds>(clock_.now().time_since_epoch()).count() / 60;
  }

  relay::testing::FakeClock clock_;
  invocation::StreamKeys keys_{"events", "relay"};
  std::unique_ptr<redis::Connection> redis_;
};

TEST_F(ThroughputTest, EachFlushAddsWhatWasCountedSinceTheLastIntoItsMinute) {
  observability::Metrics metrics;
  ThroughputRecorder recorder(keys_, metrics, clock_);
  metrics.countEvent("matched");
  metrics.countEvent("matched");
  metrics.countInvocation("shop", "bin/a.sh", "succeeded");
  metrics.countInvocation("other", "bin/b.sh", "succeeded");
  metrics.countDlqEntry("handler");
  recorder.flush(*redis_);
  const std::int64_t first = minuteNow();
  clock_.advance(minutes(1));
  metrics.countEvent("unmatched");
  metrics.countEvent("matched");
  recorder.flush(*redis_);
  recorder.flush(*redis_);  // nothing new: writes nothing
  auto history = readThroughput(*redis_, keys_, first - 1, first + 1);
  ASSERT_TRUE(history.ok()) << history.error().message;
  ASSERT_EQ(history->size(), 3u);
  EXPECT_TRUE((*history)[0].counts.empty());
  EXPECT_EQ((*history)[1].minute, first);
  EXPECT_EQ((*history)[1].counts,
            (std::map<std::string, long long>{
                {"dlq:handler", 1}, {"events:matched", 2}, {"invocations:succeeded", 2}}));
  EXPECT_EQ((*history)[2].counts,
            (std::map<std::string, long long>{{"events:matched", 1}, {"events:unmatched", 1}}));
}

TEST_F(ThroughputTest, WorkersAddToTheSameMinuteAndTheHashesExpire) {
  observability::Metrics a_metrics, b_metrics;
  ThroughputRecorder a(keys_, a_metrics, clock_, milliseconds(60'000));
  ThroughputRecorder b(keys_, b_metrics, clock_, milliseconds(60'000));
  a_metrics.countEvent("matched");
  b_metrics.countEvent("matched");
  b_metrics.countEvent("matched");
  a.flush(*redis_);
  b.flush(*redis_);
  auto history = readThroughput(*redis_, keys_, minuteNow(), minuteNow());
  ASSERT_TRUE(history.ok());
  EXPECT_EQ(history->at(0).counts.at("events:matched"), 3);
  auto ttl = redis_->command({"PTTL", keys_.minute(minuteNow())});
  ASSERT_TRUE(ttl.ok());
  EXPECT_GT(*ttl->integer(), 0);
  EXPECT_LE(*ttl->integer(), 60'000);
}

TEST_F(ThroughputTest, AFailedFlushKeepsItsDeltaForTheNext) {
  observability::Metrics metrics;
  ThroughputRecorder recorder(keys_, metrics, clock_);
  metrics.countEvent("matched");
  auto broken = server().connect();
  ASSERT_TRUE(broken->command({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"}).ok());
  recorder.flush(*redis_);  // the connection was killed: nothing written
  EXPECT_EQ(metrics.value("relay_redis_errors_total", {{"op", "throughput"}}), 1);
  auto fresh = server().connect();
  recorder.flush(*fresh);
  auto history = readThroughput(*fresh, keys_, minuteNow(), minuteNow());
  ASSERT_TRUE(history.ok());
  EXPECT_EQ(history->at(0).counts.at("events:matched"), 1);
}

TEST(ParseAttempts, SkipsFieldsOfAnotherShapeAndSortsByAttempt) {
  const auto records =
      invocation::parseAttempts({{"shop/bin/a#b.sh#2", R"({"consumer":"c","started_ms":5})"},
                                 {"shop/bin/a#b.sh#1", R"({"consumer":"c","started_ms":1})"},
                                 {"nohash", "{}"},
                                 {"shop/x#1", "not json"}});
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].handler, "bin/a#b.sh");
  EXPECT_EQ(records[0].attempt, 1);
  EXPECT_EQ(records[1].attempt, 2);
}

}  // namespace
}  // namespace relay::stream
