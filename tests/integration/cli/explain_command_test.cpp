// `relay app explain` and `relay pattern test --explain`: the real binary next to a real
// redis-server holding a stream, which explaining never reads or writes; it reads the paused
// set (docs/cli.md).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "fakes/temp_dir.h"
#include "integration/ops/relay_binary.h"
#include "support/redis_digest.h"
#include "support/redis_server.h"

namespace relay::testing {
namespace {

constexpr const char* kPending = R"({"kind":"order","new_image":{"status":"PENDING"}})";

class ExplainBinary : public RedisTest {
 protected:
  void SetUp() override {
    RedisTest::SetUp();
    redis_ = server().connect();
    apps_.write("shop/template.yaml", R"(runtime: exec
events:
  - handler: bin/h.sh
    pattern: {kind: [order]}
  - handler: bin/done.sh
    pattern:
      new_image: {status: [COMPLETED]}
)");
    apps_.write("shop/bin/h.sh", "#!/bin/sh\n", 0755);
    apps_.write("shop/bin/done.sh", "#!/bin/sh\n", 0755);
    apps_.write("pattern.yaml", "new_image: {status: [COMPLETED]}\n");
    // The stream a worker would read: explaining must leave it exactly as it is.
    ASSERT_TRUE(redis_->command({"XADD", "events", "*", "event", kPending}).ok());
    before_ = datasetDigest(*redis_);
  }
  BinaryRun relay(std::vector<std::string> args) {
    return runRelay(args, {"REDIS_URI=" + server().uri(), "RELAY_APPS=" + apps_.path().string(),
                           "RELAY_RUNTIME=process"});
  }

  std::unique_ptr<redis::Connection> redis_;
  TempDir apps_;
  std::string before_;
};

TEST_F(ExplainBinary, AppExplainNamesTheFailingConditionAndLeavesRedisAlone) {
  const BinaryRun run = relay({"app", "explain", "shop", "--event", kPending});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("app shop: 1 of 2 rules match"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("[0] bin/h.sh (template.yaml line 3): match"), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("[1] bin/done.sh (template.yaml line 5): no match: new_image.status: "
                         "got \"PENDING\", wanted one of [\"COMPLETED\"]"),
            std::string::npos)
      << run.out;
  EXPECT_EQ(datasetDigest(*redis_), before_);
}

TEST_F(ExplainBinary, PatternTestExplainNamesTheFailingConditionAndLeavesRedisAlone) {
  const BinaryRun run = relay({"pattern", "test", "--explain", "--pattern",
                               (apps_.path() / "pattern.yaml").string(), "--event", kPending});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_NE(run.out.find("new_image.status: got \"PENDING\", wanted one of [\"COMPLETED\"]"),
            std::string::npos)
      << run.out;
  EXPECT_EQ(datasetDigest(*redis_), before_);
}

TEST_F(ExplainBinary, APausedAppIsUnavailableAsOnEveryWorker) {
  const BinaryRun pause = relay({"app", "pause", "shop"});
  ASSERT_EQ(pause.exit_code, 0) << pause.err;
  const std::string paused = datasetDigest(*redis_);
  const BinaryRun text = relay({"app", "explain", "shop", "--event", kPending});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("note: the app is unavailable (paused): the worker would leave these "
                          "invocations pending"),
            std::string::npos)
      << text.out;
  const BinaryRun json = relay({"app", "explain", "shop", "--json", "--event", kPending});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto parsed = nlohmann::json::parse(json.out);
  EXPECT_EQ(parsed["available"], false);
  EXPECT_EQ(parsed["reason"], "paused");
  EXPECT_EQ(parsed["paused"], true);
  EXPECT_EQ(datasetDigest(*redis_), paused);

  ASSERT_EQ(relay({"app", "resume", "shop"}).exit_code, 0);
  const BinaryRun resumed = relay({"app", "explain", "shop", "--json", "--event", kPending});
  const auto after = nlohmann::json::parse(resumed.out);
  EXPECT_EQ(after["available"], true);
  EXPECT_EQ(after["paused"], false);
}

TEST_F(ExplainBinary, BadInputExitsNonZeroWithTheReasonAndChangesNothing) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"app", "explain", "shop", "--event", "[1]"}, "the worker would dead-letter this event"},
      {{"app", "explain", "shop", "--event", "{}", "--now", "yesterday"}, "invalid --now"},
      {{"app", "explain", "nosuch", "--event", "{}"}, "nosuch"},
      {{"pattern", "test", "--explain", "--pattern", (apps_.path() / "missing.yaml").string(),
        "--event", "{}"},
       "missing.yaml"},
  };
  for (const auto& [args, expected] : cases) {
    const BinaryRun run = relay(args);
    EXPECT_NE(run.exit_code, 0) << args[2];
    EXPECT_NE(run.err.find(expected), std::string::npos) << args[2] << " -> " << run.err;
  }
  EXPECT_EQ(datasetDigest(*redis_), before_);
}

}  // namespace
}  // namespace relay::testing
