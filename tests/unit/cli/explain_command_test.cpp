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

// docs/apps.md "Flow control": each matching rule says which limits its invocation passes, with
// the key value this event gives each keyed one; a rule that does not match has none.
class AppExplainFlow : public AppExplain {
 protected:
  void SetUp() override {
    AppExplain::SetUp();
    root_.write("pay/bin/charge.sh", "#!/bin/sh\n", 0755);
    root_.write("pay/bin/sync.sh", "#!/bin/sh\n", 0755);
    root_.write("pay/bin/plain.sh", "#!/bin/sh\n", 0755);
    root_.write("pay/bin/digest.sh", "#!/bin/sh\n", 0755);
    root_.write("pay/template.yaml", R"(runtime: exec
throttle: {limit: 20, period: 1s, burst: 5}
events:
  - handler: bin/charge.sh
    pattern: {kind: [charge]}
    concurrency: {limit: 2, key: tenant_id}
    dedupe: {key: order.id, ttl: 1h}
    throttle: {limit: 100, period: 1m}
  - handler: bin/sync.sh
    pattern: {kind: [charge]}
    singleton: {key: account}
  - handler: bin/digest.sh
    pattern: {kind: [charge]}
    debounce: {key: user, period: 30s}
  - handler: bin/plain.sh
    pattern: {kind: [refund]}
)");
  }
};

TEST_F(AppExplainFlow, NamesEachLimitWithTheKeyValueOfTheEvent) {
  const CliRun ran = explain({"pay", "--now", "2026-01-01T10:00:00Z", "--event",
                              R"({"kind":"charge","tenant_id":"acme","order":{"id":42}})"});
  EXPECT_EQ(ran.exit_code, 0) << ran.err;
  EXPECT_EQ(ran.out,
            "app pay: 3 of 4 rules match (now() = 2026-01-01T10:00:00Z)\n"
            "  [0] bin/charge.sh (template.yaml line 4): match\n"
            "      throttle: 20 per 1s, burst 5 (the whole app)\n"
            "      throttle: 100 per 1m (this rule)\n"
            "      concurrency: 2 at a time per tenant_id (this event: \"acme\")\n"
            "      dedupe: by order.id for 1h (this event: 42)\n"
            "  [1] bin/sync.sh (template.yaml line 9): match\n"
            "      throttle: 20 per 1s, burst 5 (the whole app)\n"
            "      singleton: one at a time per account, a newer event replaces a waiting one "
            "(this event has no account: it shares the key \"-\")\n"
            "  [2] bin/digest.sh (template.yaml line 12): match\n"
            "      throttle: 20 per 1s, burst 5 (the whole app)\n"
            "      debounce: by user, runs the latest after 30s quiet, at most 5m after the first "
            "(this event has no user: it shares the key \"-\")\n"
            "  [3] bin/plain.sh (template.yaml line 15): no match: kind: got \"charge\", wanted "
            "one of [\"refund\"]\n");
}

TEST_F(AppExplainFlow, JsonListsTheLimitsOfEachMatchingRule) {
  const CliRun ran =
      explain({"pay", "--json", "--event",
               R"({"kind":"charge","tenant_id":{"region":"eu","n":1},"account":"a-1"})"});
  EXPECT_EQ(ran.exit_code, 0) << ran.err;
  const auto json = nlohmann::json::parse(ran.out);
  const auto& charge = json["rules"][0]["flow"];
  ASSERT_EQ(charge.size(), 4u) << charge.dump();
  EXPECT_EQ(charge[0]["kind"], "throttle");
  EXPECT_EQ(charge[0]["scope"], "app");
  EXPECT_EQ(charge[0]["limit"], 20);
  EXPECT_EQ(charge[0]["burst"], 5);
  EXPECT_EQ(charge[0]["period_ms"], 1000);
  EXPECT_EQ(charge[1]["scope"], "rule");
  EXPECT_EQ(charge[1]["limit"], 100);
  EXPECT_EQ(charge[2]["kind"], "concurrency");
  EXPECT_EQ(charge[2]["key"], "tenant_id");
  EXPECT_EQ(charge[2]["limit"], 2);
  // An object is keyed by its compact JSON, as the worker keys it.
  EXPECT_EQ(charge[2]["key_value"], R"({"region":"eu","n":1})");
  EXPECT_EQ(charge[2]["key_missing"], false);
  EXPECT_EQ(charge[3]["kind"], "dedupe");
  EXPECT_EQ(charge[3]["key_value"], "-");
  EXPECT_EQ(charge[3]["key_missing"], true);
  EXPECT_EQ(charge[3]["applies"], false);  // no key, nothing to be a duplicate of
  EXPECT_EQ(charge[3]["ttl_ms"], 3'600'000);
  const auto& sync = json["rules"][1]["flow"];
  ASSERT_EQ(sync.size(), 2u) << sync.dump();
  EXPECT_EQ(sync[1]["kind"], "singleton");
  EXPECT_EQ(sync[1]["key_value"], "\"a-1\"");
  const auto& digest = json["rules"][2]["flow"];
  ASSERT_EQ(digest.size(), 2u) << digest.dump();
  EXPECT_EQ(digest[1]["kind"], "debounce");
  EXPECT_EQ(digest[1]["max_wait_ms"], 300'000);
  EXPECT_FALSE(json["rules"][3].contains("flow"));
}

TEST_F(AppExplainFlow, AKeyValueOver128BytesIsHashed) {
  const std::string tenant(200, 't');
  const CliRun ran =
      explain({"pay", "--json", "--event", R"({"kind":"charge","tenant_id":")" + tenant + R"("})"});
  EXPECT_EQ(ran.exit_code, 0) << ran.err;
  const auto json = nlohmann::json::parse(ran.out);
  const std::string value = json["rules"][0]["flow"][2]["key_value"];
  EXPECT_EQ(value.size(), 41u) << value;
  EXPECT_EQ(value[0], '#');
}

TEST_F(AppExplainFlow, RulesWithoutFlowControlHaveAnEmptyList) {
  const CliRun ran = explain({"shop", "--json", "--event", R"({"kind":"order"})"});
  EXPECT_EQ(ran.exit_code, 0) << ran.err;
  const auto json = nlohmann::json::parse(ran.out);
  EXPECT_EQ(json["rules"][0]["flow"], nlohmann::json::array());
}

}  // namespace
}  // namespace relay::cli
