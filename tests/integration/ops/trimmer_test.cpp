// Retention against a real redis-server (docs/operations.md "Retention"): the source stream is
// trimmed only below what every group has delivered and acknowledged, and only by age; the DLQ by
// age.
#include "stream/trimmer.h"

#include <gtest/gtest.h>

#include <sstream>

#include "fakes/fake_clock.h"
#include "support/redis_server.h"

namespace relay::stream {
namespace {

using std::chrono::milliseconds;

constexpr std::int64_t kDayMs = 86'400'000;
constexpr std::int64_t kNowMs = 1'790'000'000'000;

class Trimmer : public relay::testing::RedisTest {
 protected:
  void SetUp() override {
    RedisTest::SetUp();
    redis_ = server().connect();
    clock_.setWall(WallTime(milliseconds(kNowMs)));
  }
  stream::Trimmer trimmer(RetentionSettings settings = {}) {
    return stream::Trimmer(keys_, settings, metrics_, logger_, clock_);
  }
  // An entry `age_ms` old (its id's millisecond part), with sequence `seq`.
  std::string add(const std::string& key, std::int64_t age_ms, int seq = 0) {
    const std::string id = std::to_string(kNowMs - age_ms) + "-" + std::to_string(seq);
    auto reply = redis_->command({"XADD", key, id, "event", "{}"});
    EXPECT_TRUE(reply.ok()) << (reply.ok() ? "" : reply.error().message);
    return id;
  }
  void group(const std::string& name, const std::string& at = "0") {
    ASSERT_TRUE(redis_->command({"XGROUP", "CREATE", "events", name, at, "MKSTREAM"}).ok());
  }
  // Reads `count` new entries for `group` and returns their ids (they are pending now).
  std::vector<std::string> read(const std::string& group_name, int count) {
    auto reply = redis_->command({"XREADGROUP", "GROUP", group_name, "c", "COUNT",
                                  std::to_string(count), "STREAMS", "events", ">"});
    EXPECT_TRUE(reply.ok());
    std::vector<std::string> ids;
    auto entries = reply->at(0)->at(1);
    for (std::size_t i = 0; i < entries->size(); ++i) {
      ids.emplace_back(*entries->at(i)->at(0)->string());
    }
    return ids;
  }
  void ack(const std::string& group_name, const std::vector<std::string>& ids) {
    for (const std::string& id : ids) {
      ASSERT_TRUE(redis_->command({"XACK", "events", group_name, id}).ok());
    }
  }
  std::vector<std::string> remaining(const std::string& key = "events") {
    auto reply = redis_->command({"XRANGE", key, "-", "+"});
    std::vector<std::string> ids;
    for (std::size_t i = 0; i < reply->size(); ++i) {
      ids.emplace_back(*reply->at(i)->at(0)->string());
    }
    return ids;
  }

  relay::testing::FakeClock clock_;
  observability::Metrics metrics_;
  std::ostringstream log_;
  observability::Logger logger_{log_, clock_};
  invocation::StreamKeys keys_{"events", "relay"};
  std::unique_ptr<redis::Connection> redis_;
};

TEST_F(Trimmer, TrimsDeliveredAndAcknowledgedEntriesOlderThanTheRetention) {
  group("relay");
  add("events", 3 * kDayMs);
  add("events", 2 * kDayMs);
  const std::string fresh = add("events", 3'600'000);  // one hour old
  ack("relay", read("relay", 10));
  auto report = trimmer().trimOnce(*redis_);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(report->stream_trimmed, 2);
  EXPECT_EQ(remaining(), std::vector<std::string>{fresh});
  EXPECT_EQ(metrics_.value("relay_trimmed_entries_total", {{"target", "stream"}}), 2);
  EXPECT_NE(log_.str().find("retention trimmed the stream"), std::string::npos);
}

TEST_F(Trimmer, APendingEntryIsNeverTrimmed) {
  group("relay");
  const std::string a = add("events", 5 * kDayMs);
  const std::string b = add("events", 4 * kDayMs);
  const std::string c = add("events", 3 * kDayMs);
  ASSERT_EQ(read("relay", 10).size(), 3u);
  ack("relay", {a, c});  // b stays pending
  auto report = trimmer().trimOnce(*redis_);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(remaining(), (std::vector<std::string>{b, c}));
  ack("relay", {b});
  ASSERT_TRUE(trimmer().trimOnce(*redis_).ok());
  EXPECT_TRUE(remaining().empty());
}

TEST_F(Trimmer, AnUnreadEntryIsNeverTrimmedHoweverOld) {
  group("relay");
  add("events", 5 * kDayMs);
  const std::string b = add("events", 4 * kDayMs);
  const std::string c = add("events", 3 * kDayMs);
  ack("relay", read("relay", 1));  // only a was ever delivered
  ASSERT_TRUE(trimmer().trimOnce(*redis_).ok());
  EXPECT_EQ(remaining(), (std::vector<std::string>{b, c}));
}

TEST_F(Trimmer, ASlowGroupHoldsTrimmingBack) {
  group("relay");
  group("slow");
  add("events", 5 * kDayMs);
  const std::string b = add("events", 4 * kDayMs);
  const std::string c = add("events", 3 * kDayMs);
  ack("relay", read("relay", 10));
  ack("slow", read("slow", 1));
  ASSERT_TRUE(trimmer().trimOnce(*redis_).ok());
  EXPECT_EQ(remaining(), (std::vector<std::string>{b, c}));
  // The slow group reads the rest but has not acknowledged b yet.
  const auto rest = read("slow", 10);
  ASSERT_EQ(rest.size(), 2u);
  ack("slow", {c});
  ASSERT_TRUE(trimmer().trimOnce(*redis_).ok());
  EXPECT_EQ(remaining(), (std::vector<std::string>{b, c}));
  ack("slow", {b});
  ASSERT_TRUE(trimmer().trimOnce(*redis_).ok());
  EXPECT_TRUE(remaining().empty());
}

TEST_F(Trimmer, AGroupCreatedAtTheEndDoesNotNeedTheHistory) {
  group("relay");
  add("events", 3 * kDayMs);
  ack("relay", read("relay", 10));
  group("late", "$");  // wants only new entries
  ASSERT_TRUE(trimmer().trimOnce(*redis_).ok());
  EXPECT_TRUE(remaining().empty());
}

TEST_F(Trimmer, NoGroupNoTrim) {
  add("events", 5 * kDayMs);
  auto report = trimmer().trimOnce(*redis_);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->stream_trimmed, 0);
  EXPECT_FALSE(report->stream_min_id);
  EXPECT_EQ(remaining().size(), 1u);
}

TEST_F(Trimmer, AMissingStreamIsNothingToTrim) {
  auto report = trimmer().trimOnce(*redis_);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(report->stream_trimmed, 0);
  EXPECT_EQ(report->dlq_trimmed, 0);
}

TEST_F(Trimmer, ZeroRetentionNeverTrims) {
  group("relay");
  add("events", 30 * kDayMs);
  add(keys_.dlq(), 30 * kDayMs);
  ack("relay", read("relay", 10));
  auto report = trimmer({milliseconds(0), milliseconds(0)}).trimOnce(*redis_);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(remaining().size(), 1u);
  EXPECT_EQ(remaining(keys_.dlq()).size(), 1u);
}

TEST_F(Trimmer, TheDlqIsTrimmedByAgeAlone) {
  add(keys_.dlq(), 9 * kDayMs);
  add(keys_.dlq(), 8 * kDayMs);
  const std::string kept = add(keys_.dlq(), 6 * kDayMs);
  auto report = trimmer().trimOnce(*redis_);  // default REDIS_DLQ_RETENTION: 7d
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->dlq_trimmed, 2);
  EXPECT_EQ(remaining(keys_.dlq()), std::vector<std::string>{kept});
  EXPECT_EQ(metrics_.value("relay_trimmed_entries_total", {{"target", "dlq"}}), 2);
}

TEST_F(Trimmer, GroupPositionsReportLastDeliveredAndFirstPending) {
  group("relay");
  const std::string a = add("events", 3 * kDayMs);
  const std::string b = add("events", 2 * kDayMs);
  read("relay", 10);
  ack("relay", {a});
  auto positions = stream::Trimmer::groupPositions(*redis_, "events");
  ASSERT_TRUE(positions.ok());
  ASSERT_EQ(positions->size(), 1u);
  EXPECT_EQ((*positions)[0].name, "relay");
  EXPECT_EQ((*positions)[0].last_delivered.toString(), b);
  ASSERT_TRUE((*positions)[0].first_pending);
  EXPECT_EQ((*positions)[0].first_pending->toString(), b);
}

TEST_F(Trimmer, ARedisFailureIsReturnedAndCounted) {
  ASSERT_TRUE(redis_->command({"SET", "events", "not a stream"}).ok());
  auto report = trimmer().trimOnce(*redis_);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(metrics_.value("relay_redis_errors_total", {{"op", "trim_stream"}}), 1);
}

}  // namespace
}  // namespace relay::stream
