// `relay app explain`: in process, on a temp apps root (no handler runs; Redis unreachable).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "fakes/temp_dir.h"
#include "support/cli_run.h"

namespace relay::cli {
namespace {

using testing::CliRun;
using testing::run;
using testing::ScopedEnv;

class AppExplain : public ::testing::Test {
 protected:
  void SetUp() override {
    root_.write("shop/bin/h.sh", "#!/bin/sh\n", 0755);
    root_.write("shop/template.yaml", R"(runtime: exec
events:
  - handler: bin/h.sh
    pattern: {kind: [order]}
  - handler: bin/big.sh
    pattern:
      kind: [order]
      new_image: {status: [COMPLETED], amount: [{gt: 100}]}
  - handler: bin/recent.sh
    pattern: {at: [{gt: "now()-5m"}]}
)");
    root_.write("shop/bin/big.sh", "#!/bin/sh\n", 0755);
    root_.write("shop/bin/recent.sh", "#!/bin/sh\n", 0755);
    root_.write("bad/template.yaml", "runtime: exec\nevents: 3\n");
  }
  CliRun explain(std::vector<std::string> args) {
    std::vector<std::string> all = {"app", "explain"};
    all.insert(all.end(), args.begin(), args.end());
    all.insert(all.end(), {"--apps", root_.path().string(), "--runtime", "process"});
    return run(all);
  }

  relay::testing::TempDir root_;
  ScopedEnv no_max_{"MAX_EVENT_BYTES", std::nullopt};
  ScopedEnv no_redis_{"REDIS_URI", "127.0.0.1:1"};
};

TEST_F(AppExplain, SaysForEachRuleMatchOrTheFirstFailingCondition) {
  const CliRun ran = explain({"shop", "--now", "2026-01-01T10:00:00Z", "--event",
                              R"({"kind":"order","new_image":{"status":"PENDING","amount":500}})"});
  EXPECT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_EQ(ran.out,
            "app shop: 1 of 3 rules match (now() = 2026-01-01T10:00:00Z)\n"
            "  [0] bin/h.sh (template.yaml line 3): match\n"
            "  [1] bin/big.sh (template.yaml line 5): no match: new_image.status: got "
            "\"PENDING\", wanted one of [\"COMPLETED\"]\n"
            "  [2] bin/recent.sh (template.yaml line 9): no match: at: got nothing (no such "
            "field), wanted one of [{gt: \"now()-5m\"}] with now() = 2026-01-01T10:00:00Z\n");
}

TEST_F(AppExplain, WithoutRedisThePausedStateIsUnknownAndSaidSo) {
  const CliRun ran = explain({"shop", "--json", "--event", R"({"kind":"order"})"});
  EXPECT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_NE(ran.err.find("note: paused apps unknown (cannot reach Redis at"), std::string::npos)
      << ran.err;
  const auto json = nlohmann::json::parse(ran.out);
  EXPECT_TRUE(json["paused"].is_null());
  EXPECT_EQ(json["available"], true);
}

TEST_F(AppExplain, NoRuleMatchingExitsOne) {
  const CliRun ran = explain({"shop", "--event", R"({"kind":"refund"})"});
  EXPECT_EQ(ran.exit_code, 1);
  EXPECT_NE(ran.out.find("0 of 3 rules match"), std::string::npos) << ran.out;
  EXPECT_NE(ran.out.find(R"(kind: got "refund", wanted one of ["order"])"), std::string::npos);
}

TEST_F(AppExplain, JsonHasOneObjectPerRule) {
  const CliRun ran = explain({"shop", "--json", "--now", "2026-01-01T10:00:00Z", "--event",
                              R"({"kind":"order","at":"2026-01-01T09:58:00Z"})"});
  EXPECT_EQ(ran.exit_code, 0) << ran.err;
  const auto json = nlohmann::json::parse(ran.out);
  EXPECT_EQ(json["app"], "shop");
  EXPECT_EQ(json["matched"], 2);
  ASSERT_EQ(json["rules"].size(), 3u);
  EXPECT_EQ(json["rules"][0]["match"], true);
  EXPECT_EQ(json["rules"][1]["match"], false);
  EXPECT_EQ(json["rules"][1]["path"], "new_image.status");
  EXPECT_EQ(json["rules"][1]["got"], "nothing (new_image is absent)");
  EXPECT_EQ(json["rules"][1]["handler"], "bin/big.sh");
  EXPECT_EQ(json["rules"][2]["match"], true);
}

TEST_F(AppExplain, AnEventTheWorkerWouldDeadLetterIsAUsageError) {
  const CliRun bad = explain({"shop", "--event", "[1]"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("the worker would dead-letter this event: malformed: the event must be "
                         "a JSON object, got an array"),
            std::string::npos)
      << bad.err;
  ScopedEnv small("MAX_EVENT_BYTES", "8");
  const CliRun big = explain({"shop", "--event", R"({"kind":"order"})"});
  EXPECT_EQ(big.exit_code, 2);
  EXPECT_NE(big.err.find("oversized: event is 16 bytes, over MAX_EVENT_BYTES 8B"),
            std::string::npos)
      << big.err;
}

TEST_F(AppExplain, UnknownOrInvalidAppsAndBadNowAreRefused) {
  const CliRun unknown = explain({"nope", "--event", "{}"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("no app named \"nope\""), std::string::npos) << unknown.err;
  const CliRun invalid = explain({"bad", "--event", "{}"});
  EXPECT_EQ(invalid.exit_code, 2);
  EXPECT_NE(invalid.err.find("has no valid template"), std::string::npos) << invalid.err;
  const CliRun now = explain({"shop", "--event", "{}", "--now", "yesterday"});
  EXPECT_EQ(now.exit_code, 2);
  EXPECT_NE(now.err.find("invalid --now \"yesterday\""), std::string::npos) << now.err;
}

}  // namespace
}  // namespace relay::cli
