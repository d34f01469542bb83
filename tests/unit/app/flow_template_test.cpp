// Flow control in template.yaml (docs/apps.md "Flow control"): every error FlowReader reports,
// as `relay validate` prints it (file:LINE:COL, the key's path, what was expected), and the
// values the valid forms give.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "app/app_loader.h"
#include "app_test_util.h"

namespace relay::app {
namespace {

using testing::AppsRoot;
using testing::at;
using testing::errorStrings;

class FlowTemplate : public ::testing::Test {
 protected:
  // `top` goes before `events:` (app-level keys), `rule` after the one rule's pattern.
  std::string yaml(const std::string& top, const std::string& rule) {
    return "runtime: exec\n" + top +
           "events:\n  - handler: bin/h.sh\n    pattern: {table_name: [users]}\n" + rule;
  }
  LoadResult load(const std::string& text) {
    root_.writeFile("demo", "bin/h.sh", "#!/bin/sh\n", 0755);
    root_.writeTemplate("demo", text);
    return root_.load("demo");
  }
  // The errors of a rule holding `rule` (its lines start at line 5).
  std::vector<std::string> ruleErrors(const std::string& rule) {
    const LoadResult result = load(yaml("", rule));
    EXPECT_EQ(result.app, nullptr);
    return errorStrings(result);
  }
  std::vector<std::string> expected(const std::vector<std::string>& located) {
    return at(root_.templatePath("demo"), located);
  }
  const Rule& onlyRule(const std::string& top, const std::string& rule) {
    result_ = load(yaml(top, rule));
    EXPECT_TRUE(result_.errors.empty()) << errorStrings(result_).front();
    return result_.app->rules.at(0);
  }

  AppsRoot root_;
  LoadResult result_;
};

TEST_F(FlowTemplate, AZeroOrNegativeLimitNamesItsRange) {
  EXPECT_EQ(ruleErrors("    throttle: {limit: 0, period: 1s}\n"),
            expected({"5:23: events[0].throttle.limit: must be between 1 and 1000000, got 0"}));
  EXPECT_EQ(ruleErrors("    throttle: {limit: -3, period: 1s}\n"),
            expected({"5:23: events[0].throttle.limit: must be between 1 and 1000000, got -3"}));
  EXPECT_EQ(ruleErrors("    concurrency: {limit: 0, key: tenant_id}\n"),
            expected({"5:26: events[0].concurrency.limit: must be between 1 and 10000, got 0"}));
  EXPECT_EQ(ruleErrors("    throttle: {limit: 5, period: 1s, burst: -1}\n"),
            expected({"5:45: events[0].throttle.burst: must be between 0 and 1000000, got -1"}));
  EXPECT_EQ(
      ruleErrors("    throttle: {limit: 5, period: 1s, burst: 2000000}\n"),
      expected({"5:45: events[0].throttle.burst: must be between 0 and 1000000, got 2000000"}));
}

TEST_F(FlowTemplate, TheAppThrottleIsCheckedAtTheTopLevel) {
  const LoadResult result = load(yaml("throttle: {limit: 0, period: 1s}\n", ""));
  EXPECT_EQ(errorStrings(result),
            expected({"2:19: throttle.limit: must be between 1 and 1000000, got 0"}));
}

TEST_F(FlowTemplate, AMissingRequiredKeyIsNamed) {
  EXPECT_EQ(ruleErrors("    throttle: {limit: 5}\n"),
            expected({"5:15: events[0].throttle: missing required key \"period\""}));
  EXPECT_EQ(ruleErrors("    concurrency: {limit: 2}\n"),
            expected({"5:18: events[0].concurrency: missing required key \"key\""}));
  EXPECT_EQ(ruleErrors("    dedupe: {ttl: 1h}\n"),
            expected({"5:13: events[0].dedupe: missing required key \"key\""}));
  EXPECT_EQ(ruleErrors("    debounce: {key: user_id}\n"),
            expected({"5:15: events[0].debounce: missing required key \"period\""}));
  EXPECT_EQ(ruleErrors("    singleton: {}\n"),
            expected({"5:16: events[0].singleton: missing required key \"key\""}));
}

TEST_F(FlowTemplate, AKeyPathMustNameAField) {
  EXPECT_EQ(ruleErrors("    concurrency: {limit: 2, key: \"\"}\n"),
            expected({"5:34: events[0].concurrency.key: expected the dotted path of an event "
                      "field such as tenant_id or new_image.tenant_id (1 to 256 bytes), got an "
                      "empty string"}));
  EXPECT_EQ(ruleErrors("    concurrency: {limit: 2, key: " + std::string(257, 'k') + "}\n"),
            expected({"5:34: events[0].concurrency.key: expected the dotted path of an event "
                      "field such as tenant_id or new_image.tenant_id (1 to 256 bytes), got 257 "
                      "bytes"}));
  EXPECT_EQ(ruleErrors("    concurrency: {limit: 2, key: a..b}\n"),
            expected({"5:34: events[0].concurrency.key: \"a..b\" is not a dotted path of event "
                      "fields: a part between dots is empty"}));
  EXPECT_EQ(ruleErrors("    dedupe: {key: order.}\n"),
            expected({"5:19: events[0].dedupe.key: \"order.\" is not a dotted path of event "
                      "fields: a part between dots is empty"}));
  EXPECT_EQ(ruleErrors("    singleton: {key: 7}\n"),
            expected({"5:22: events[0].singleton.key: expected a string, got the integer 7 "
                      "(quote it if you mean the text: \"7\")"}));
}

TEST_F(FlowTemplate, PeriodsBelowTheResolutionOrAboveTheirCapAreRefused) {
  EXPECT_EQ(ruleErrors("    throttle: {limit: 5, period: 5ms}\n"),
            expected({"5:34: events[0].throttle.period: must be at least 10ms (the resolution "
                      "of flow control), got 5ms"}));
  EXPECT_EQ(ruleErrors("    throttle: {limit: 5, period: 0s}\n"),
            expected({"5:34: events[0].throttle.period: must be greater than 0"}));
  EXPECT_EQ(ruleErrors("    throttle: {limit: 5, period: 2d}\n"),
            expected({"5:34: events[0].throttle.period: must be at most 1d, got 2d"}));
  EXPECT_EQ(ruleErrors("    throttle: {limit: 5, period: soon}\n"),
            expected({"5:34: events[0].throttle.period: invalid duration \"soon\": expected a "
                      "number at position 1 (expected e.g. 500ms, 90s, 1h30m, 7d)"}));
  EXPECT_EQ(ruleErrors("    dedupe: {key: id, ttl: 5ms}\n"),
            expected({"5:28: events[0].dedupe.ttl: must be at least 10ms (the resolution of "
                      "flow control), got 5ms"}));
  EXPECT_EQ(ruleErrors("    dedupe: {key: id, ttl: 60d}\n"),
            expected({"5:28: events[0].dedupe.ttl: must be at most 30d, got 60d"}));
  EXPECT_EQ(ruleErrors("    debounce: {key: u, period: 2h}\n"),
            expected({"5:32: events[0].debounce.period: must be at most 1h, got 2h"}));
}

TEST_F(FlowTemplate, AThrottleFinerThanAMillisecondIsRefused) {
  EXPECT_EQ(ruleErrors("    throttle: {limit: 50, period: 10ms}\n"),
            expected({"5:15: events[0].throttle: limit 50 per 10ms would start more than one "
                      "per millisecond: at most 10 per 10ms"}));
}

TEST_F(FlowTemplate, DebounceMaxWaitIsAtLeastItsPeriod) {
  EXPECT_EQ(ruleErrors("    debounce: {key: u, period: 30s, max_wait: 10s}\n"),
            expected({"5:47: events[0].debounce.max_wait: must be at least the period (30s), "
                      "got 10s"}));
}

TEST_F(FlowTemplate, SingletonExcludesConcurrencyAndDebounce) {
  EXPECT_EQ(ruleErrors("    singleton: {key: a}\n    concurrency: {limit: 2, key: a}\n"),
            expected({"5:16: events[0].singleton: a rule has singleton or a per-key "
                      "concurrency, not both (singleton is a limit of 1 per key that replaces "
                      "waiting events)"}));
  EXPECT_EQ(ruleErrors("    singleton: {key: a}\n    debounce: {key: a, period: 1s}\n"),
            expected({"5:16: events[0].singleton: a rule has singleton or debounce, not both "
                      "(each replaces the events it holds back in its own way)"}));
}

TEST_F(FlowTemplate, UnknownKeysInsideAGateAreNamed) {
  EXPECT_EQ(ruleErrors("    throttle: {limit: 5, period: 1s, brust: 2}\n"),
            expected({"5:38: events[0].throttle: unknown key \"brust\" (did you mean "
                      "\"burst\"?)"}));
  EXPECT_EQ(ruleErrors("    throttle: {limit: 5, period: 1s, colour: 2}\n"),
            expected({"5:38: events[0].throttle: unknown key \"colour\" (expected one of: "
                      "limit, period, burst)"}));
  EXPECT_EQ(ruleErrors("    debounce: {key: u, period: 1s, wait: 1m}\n"),
            expected({"5:36: events[0].debounce: unknown key \"wait\" (expected one of: key, "
                      "period, max_wait)"}));
}

TEST_F(FlowTemplate, AScalarWhereAMapBelongsSaysWhatIsExpected) {
  EXPECT_EQ(ruleErrors("    concurrency: 2\n"),
            expected({"5:18: events[0].concurrency: expected a map {limit: N, key: field.path}: "
                      "a rule's concurrency is per key (the app-wide cap is the top-level "
                      "concurrency), got the integer 2"}));
  EXPECT_EQ(ruleErrors("    throttle: 20\n"),
            expected({"5:15: events[0].throttle: expected a map with limit and period (e.g. "
                      "{limit: 20, period: 1s}), got the integer 20"}));
}

TEST_F(FlowTemplate, ValidFormsCarryTheirValuesAndDefaults) {
  const Rule& rule = onlyRule("throttle: {limit: 20, period: 1s, burst: 5}\n",
                              "    throttle: {limit: 100, period: 1m}\n"
                              "    concurrency: {limit: 2, key: new_image.tenant_id}\n"
                              "    dedupe: {key: order_id}\n"
                              "    debounce: {key: user_id, period: 30s}\n");
  ASSERT_TRUE(result_.app->throttle.has_value());
  EXPECT_EQ(result_.app->throttle->limit, 20);
  EXPECT_EQ(result_.app->throttle->burst, 5);
  EXPECT_EQ(result_.app->throttle->period, std::chrono::seconds(1));
  ASSERT_TRUE(rule.flow.throttle.has_value());
  EXPECT_EQ(rule.flow.throttle->limit, 100);
  EXPECT_EQ(rule.flow.throttle->burst, 0);
  EXPECT_EQ(rule.flow.throttle->period, std::chrono::minutes(1));
  ASSERT_TRUE(rule.flow.concurrency.has_value());
  EXPECT_EQ(rule.flow.concurrency->limit, 2);
  EXPECT_EQ(rule.flow.concurrency->key.segments,
            (std::vector<std::string>{"new_image", "tenant_id"}));
  ASSERT_TRUE(rule.flow.dedupe.has_value());
  EXPECT_EQ(rule.flow.dedupe->ttl, std::chrono::hours(24));  // the default
  ASSERT_TRUE(rule.flow.debounce.has_value());
  EXPECT_EQ(rule.flow.debounce->max_wait, std::chrono::minutes(5));  // 10 periods by default
  EXPECT_FALSE(rule.flow.singleton.has_value());
}

TEST_F(FlowTemplate, DefaultMaxWaitIsCappedAndLimitsAtTheirBoundsAreValid) {
  const Rule& rule = onlyRule("",
                              "    debounce: {key: u, period: 1h}\n"
                              "    throttle: {limit: 10, period: 10ms, burst: 1000000}\n");
  EXPECT_EQ(rule.flow.debounce->max_wait, std::chrono::hours(10));
  EXPECT_EQ(rule.flow.throttle->limit, 10);
  const Rule& single = onlyRule("",
                                "    singleton: {key: account}\n"
                                "    dedupe: {key: id, ttl: 30d}\n");
  ASSERT_TRUE(single.flow.singleton.has_value());
  EXPECT_EQ(single.flow.singleton->key.text, "account");
  EXPECT_EQ(single.flow.dedupe->ttl, std::chrono::hours(24 * 30));
}

TEST_F(FlowTemplate, ARuleWithoutFlowKeysHasNoFlowControl) {
  const Rule& rule = onlyRule("", "");
  EXPECT_TRUE(rule.flow.empty());
  EXPECT_FALSE(result_.app->throttle.has_value());
}

}  // namespace
}  // namespace relay::app
