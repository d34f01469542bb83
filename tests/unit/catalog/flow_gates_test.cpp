// The flow gates an invocation carries (docs/apps.md "Flow control"): the app's and the rule's,
// each keyed one with the key value its event gives, as the worker plans it and `relay app
// explain` shows it.
#include "catalog/flow_gates.h"

#include <gtest/gtest.h>

#include <string>

#include "app/flow_reader.h"
#include "redis/sha1.h"

namespace relay::catalog {
namespace {

event::Event eventOf(const std::string& json) { return event::decode(json).value(); }

app::KeyPath path(const std::string& text) { return app::parseKeyPath(text).value(); }

TEST(FlowKeyValue, IsTheFieldsCompactJsonAndADashWhenTheEventHasNoSuchField) {
  const event::Event event = eventOf(
      R"({"tenant":"acme","n":42,"flag":true,"nil":null,"deep":{"region":"eu","ids":[1, 2]},)"
      R"("tab":"a\tb"})");
  EXPECT_EQ(flowKeyValue(event, path("tenant")), R"("acme")");
  EXPECT_EQ(flowKeyValue(event, path("n")), "42");
  EXPECT_EQ(flowKeyValue(event, path("flag")), "true");
  EXPECT_EQ(flowKeyValue(event, path("nil")), "null");
  EXPECT_EQ(flowKeyValue(event, path("deep.region")), R"("eu")");
  EXPECT_EQ(flowKeyValue(event, path("deep")), R"({"region":"eu","ids":[1,2]})");
  // A tab is escaped: a key value never breaks the plan's line (docs/pipeline.md).
  EXPECT_EQ(flowKeyValue(event, path("tab")), R"("a\tb")");
  EXPECT_EQ(flowKeyValue(event, path("missing")), "-");
  EXPECT_EQ(flowKeyValue(event, path("tenant.inner")), "-");  // not an object
  EXPECT_EQ(flowKeyValue(event, path("deep.ids.0")), "-");    // arrays are not walked
}

TEST(FlowKeyValue, AValueLongerThan128BytesIsKeyedByItsSha1) {
  const std::string long_text(200, 'x');
  const event::Event event = eventOf(R"({"k":")" + long_text + R"("})");
  EXPECT_EQ(flowKeyValue(event, path("k")), "#" + redis::sha1Hex("\"" + long_text + "\""));
  const std::string exactly(126, 'y');  // 128 bytes with its quotes: kept as it is
  EXPECT_EQ(flowKeyValue(eventOf(R"({"k":")" + exactly + R"("})"), path("k")),
            "\"" + exactly + "\"");
}

TEST(FlowControlOfARule, CarriesTheAppsAndTheRulesGatesWithTheEventsKeyValues) {
  app::App app;
  app.throttle = app::ThrottleRule{20, std::chrono::seconds(1), 5};
  app::Rule rule;
  rule.flow.throttle = app::ThrottleRule{100, std::chrono::minutes(1), 0};
  rule.flow.concurrency = app::KeyConcurrencyRule{2, path("tenant")};
  rule.flow.dedupe = app::DedupeRule{path("order.id"), std::chrono::hours(1)};
  rule.flow.debounce =
      app::DebounceRule{path("user"), std::chrono::seconds(30), std::chrono::minutes(5)};
  const invocation::FlowControl flow =
      flowControl(app, rule, eventOf(R"({"tenant":"acme","order":{"id":7},"user":"u1"})"));
  ASSERT_EQ(flow.throttles.size(), 2u);
  EXPECT_EQ(flow.throttles[0].scope, invocation::FlowScope::kApp);
  EXPECT_EQ(flow.throttles[0].limit, 20);
  EXPECT_EQ(flow.throttles[0].burst, 5);
  EXPECT_EQ(flow.throttles[1].scope, invocation::FlowScope::kRule);
  EXPECT_EQ(flow.throttles[1].period, std::chrono::minutes(1));
  ASSERT_TRUE(flow.key);
  EXPECT_EQ(flow.key->limit, 2);
  EXPECT_FALSE(flow.key->singleton);
  EXPECT_EQ(flow.key->value, R"("acme")");
  ASSERT_TRUE(flow.dedupe);
  EXPECT_EQ(flow.dedupe->value, "7");
  EXPECT_EQ(flow.dedupe->ttl, std::chrono::hours(1));
  ASSERT_TRUE(flow.debounce);
  EXPECT_EQ(flow.debounce->value, R"("u1")");
  EXPECT_EQ(flow.debounce->max_wait, std::chrono::minutes(5));
}

TEST(FlowControlOfARule, ASingletonIsAKeyLimitOfOneAndAMissingKeyIsItsOwnKey) {
  app::Rule rule;
  rule.flow.singleton = app::SingletonRule{path("account")};
  const invocation::FlowControl flow = flowControl(app::App{}, rule, eventOf(R"({"x":1})"));
  ASSERT_TRUE(flow.key);
  EXPECT_EQ(flow.key->limit, 1);
  EXPECT_TRUE(flow.key->singleton);
  EXPECT_EQ(flow.key->value, "-");
  EXPECT_TRUE(flow.throttles.empty());
}

TEST(FlowControlOfARule, AnEventWithoutItsDedupeKeyIsNeverDeduplicated) {
  app::Rule rule;
  rule.flow.dedupe = app::DedupeRule{path("order_id"), std::chrono::hours(1)};
  EXPECT_FALSE(flowControl(app::App{}, rule, eventOf(R"({"kind":"order"})")).dedupe);
  EXPECT_TRUE(flowControl(app::App{}, rule, eventOf(R"({"order_id":null})")).dedupe);
}

TEST(FlowControlOfASchedule, IsTheAppsThrottleAlone) {
  app::App app;
  EXPECT_TRUE(scheduleFlowControl(app).empty());
  app.throttle = app::ThrottleRule{1, std::chrono::minutes(1), 0};
  const invocation::FlowControl flow = scheduleFlowControl(app);
  ASSERT_EQ(flow.throttles.size(), 1u);
  EXPECT_EQ(flow.throttles[0].scope, invocation::FlowScope::kApp);
  EXPECT_FALSE(flow.key);
}

}  // namespace
}  // namespace relay::catalog
