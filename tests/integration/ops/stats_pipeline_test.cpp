// Persisted statistics and structured log lines written by the real lifecycle against a real
// redis-server (scripted FakeRuntime, FakeClock).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "integration/stream/pipeline_fixture.h"
#include "invocation/attempt_journal.h"
#include "stream/handler_stats.h"

namespace relay::stream::testing {
namespace {

using std::chrono::minutes;

constexpr const char* kApp = R"(runtime: exec
events:
  - handler: bin/ok.sh
    pattern: {kind: [order]}
  - handler: bin/bad.sh
    pattern: {kind: [order]}
    retries: 1
)";

class StatsPipeline : public PipelineTest {
 protected:
  void SetUp() override {
    PipelineTest::SetUp();
    writeApp("shop", kApp, {"bin/ok.sh", "bin/bad.sh"});
    runtime_.failAlways("shop/bin/bad.sh", "exit 3");
  }
  std::map<std::string, std::string> stats() {
    auto reply = redis_->command({"HGETALL", "relay:events:stats"});
    std::map<std::string, std::string> out;
    for (std::size_t i = 0; i + 1 < reply->size(); i += 2) {
      out[std::string(*reply->at(i)->string())] = std::string(*reply->at(i + 1)->string());
    }
    return out;
  }
};

TEST_F(StatsPipeline, SuccessesFailuresDlqAndDurationArePersistedPerHandler) {
  build();
  xadd(R"({"kind":"order"})");
  readOnce();
  waitForBackoff();
  reclaim();  // bad.sh: second and last attempt, then dead-lettered
  EXPECT_EQ(pendingCount(), 0);
  const auto hash = stats();
  EXPECT_EQ(hash.at("shop/bin/ok.sh:succeeded"), "1");
  EXPECT_EQ(hash.at("shop/bin/bad.sh:failed"), "2");
  EXPECT_EQ(hash.at("shop/bin/bad.sh:dlq"), "1");
  EXPECT_EQ(hash.count("shop/bin/ok.sh:failed"), 0u);
  EXPECT_TRUE(hash.count("shop/bin/ok.sh:duration_seconds"));
  EXPECT_TRUE(hash.count("shop/bin/bad.sh:duration_seconds"));
  std::vector<std::pair<std::string, std::string>> pairs(hash.begin(), hash.end());
  const auto rows = parseStats(pairs);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].handler, "bin/bad.sh");
  EXPECT_EQ(rows[0].runs(), 2);
  EXPECT_EQ(rows[1].handler, "bin/ok.sh");
}

TEST_F(StatsPipeline, TheAttemptJournalKeepsEveryRunOfTheMessage) {
  build();
  const std::string id = xadd(R"({"kind":"order"})");
  readOnce();
  waitForBackoff();
  reclaim();
  auto reply = redis_->command({"HGETALL", "relay:events:attempts:relay:" + id});
  ASSERT_TRUE(reply.ok());
  std::vector<std::pair<std::string, std::string>> pairs;
  for (std::size_t i = 0; i + 1 < reply->size(); i += 2) {
    pairs.emplace_back(*reply->at(i)->string(), *reply->at(i + 1)->string());
  }
  const auto records = invocation::parseAttempts(pairs);
  ASSERT_EQ(records.size(), 3u);  // bad.sh twice, ok.sh once
  EXPECT_EQ(records[0].handler, "bin/bad.sh");
  EXPECT_EQ(records[0].attempt, 1);
  EXPECT_EQ(records[0].outcome, "failed");
  EXPECT_EQ(records[0].reason, "exit 3");
  EXPECT_EQ(records[1].attempt, 2);
  EXPECT_EQ(records[2].handler, "bin/ok.sh");
  EXPECT_EQ(records[2].outcome, "succeeded");
  EXPECT_EQ(records[2].consumer, "worker-1");
}

TEST_F(StatsPipeline, EveryWorkerAddsToTheSameCounters) {
  build();
  auto replica = replicaLifecycle("worker-2");
  auto store = newStore("worker-2");
  const std::atomic<bool> stopping{false};
  xadd(R"({"kind":"order"})");
  readOnce();
  const std::string second = xadd(R"({"kind":"order"})");
  // Another worker delivers the second message.
  auto read =
      redis_->command({"XREADGROUP", "GROUP", "relay", "worker-2", "STREAMS", "events", ">"});
  ASSERT_TRUE(read.ok());
  replica->process(*store, entryOf(second), stopping);
  EXPECT_EQ(stats().at("shop/bin/ok.sh:succeeded"), "2");
}

TEST_F(StatsPipeline, MalformedMessagesAreCountedUnderDashes) {
  build();
  xadd("{not json");
  xaddFields({"no", "event"});
  readOnce();
  EXPECT_EQ(stats().at("-/-:dlq"), "2");
}

TEST_F(StatsPipeline, AStatsFailureNeverChangesTheLifecycle) {
  build();
  // The statistics key holds a string: every HINCRBY fails with WRONGTYPE.
  ASSERT_TRUE(redis_->command({"SET", "relay:events:stats", "in the way"}).ok());
  const std::string id = xadd(R"({"kind":"order"})");
  readOnce();
  waitForBackoff();
  reclaim();
  EXPECT_EQ(pendingCount(), 0);
  EXPECT_EQ(marker(id, "shop/bin/ok.sh").substr(0, 12), "succeeded:1:");
  EXPECT_EQ(dlqEntries().size(), 1u);
  EXPECT_GE(metrics_.value("relay_redis_errors_total", {{"op", "stats"}}), 4);
}

TEST_F(StatsPipeline, JsonLogLinesCarryTheInvocationFields) {
  std::ostringstream json_log;
  observability::Logger json_logger(json_log, clock_, observability::LogLevel::kDebug,
                                    observability::LogFormat::kJson);
  build();
  invocation::Lifecycle lifecycle(lifecycle_settings_, *catalog_, runtime_, *limiter_, nullptr,
                                  observer_, metrics_, json_logger, clock_, random_);
  const std::atomic<bool> stopping{false};
  const std::string id = xadd(R"({"kind":"order"})");
  ASSERT_TRUE(
      redis_->command({"XREADGROUP", "GROUP", "relay", "worker-1", "STREAMS", "events", ">"}).ok());
  lifecycle.process(*store_, entryOf(id), stopping);
  std::istringstream lines(json_log.str());
  std::string line;
  bool succeeded = false;
  bool failed = false;
  bool output = false;
  while (std::getline(lines, line)) {
    const nlohmann::json record = nlohmann::json::parse(line);  // every line is JSON
    ASSERT_TRUE(record.contains("time") && record.contains("level") && record.contains("message"))
        << line;
    if (record["message"] == "invocation succeeded") {
      succeeded = true;
      EXPECT_EQ(record["level"], "info");
      EXPECT_EQ(record["message_id"], id);
      EXPECT_EQ(record["app"], "shop");
      EXPECT_EQ(record["handler"], "bin/ok.sh");
      EXPECT_EQ(record["attempt"], "1");
      EXPECT_EQ(record["outcome"], "succeeded");
      EXPECT_EQ(record["duration"].get<std::string>().back(), 's');
    }
    if (record["message"] == "invocation failed: will retry") {
      failed = true;
      EXPECT_EQ(record["level"], "warn");
      EXPECT_EQ(record["outcome"], "failed");
      EXPECT_EQ(record["reason"], "exit 3");
    }
    if (record["level"] == "output") output = true;
  }
  EXPECT_TRUE(succeeded) << json_log.str();
  EXPECT_TRUE(failed) << json_log.str();
  EXPECT_TRUE(output) << json_log.str();
}

}  // namespace
}  // namespace relay::stream::testing
