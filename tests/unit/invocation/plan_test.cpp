#include "invocation/plan.h"

#include <gtest/gtest.h>

namespace relay::invocation {
namespace {

TEST(Plan, RoundTripsInvocationsInOrder) {
  Plan plan;
  plan.invocations.push_back(
      {"shop", "bin/notify.sh", 3, std::chrono::seconds(20), runtime::Trigger::kEvent, {}});
  plan.invocations.push_back(
      {"jobs", "tasks.report.run", 1, std::chrono::minutes(5), runtime::Trigger::kSchedule, {}});
  const std::string text = encodePlan(plan);
  EXPECT_EQ(text, "e 3 20000 shop/bin/notify.sh\ns 1 300000 jobs/tasks.report.run\n");
  EXPECT_EQ(decodePlan(text), plan);
}

TEST(Plan, HandlerNamesMayContainSpacesAndSlashes) {
  Plan plan;
  plan.invocations.push_back(
      {"shop", "bin/my handler.sh", 1, std::chrono::seconds(1), runtime::Trigger::kEvent, {}});
  const auto decoded = decodePlan(encodePlan(plan));
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->invocations.at(0).handler, "bin/my handler.sh");
  EXPECT_EQ(decoded->invocations.at(0).app, "shop");
}

// docs/replay.md "Copies": a replay copy's invocations say so (RELAY_TRIGGER=replay).
TEST(Plan, AReplayInvocationKeepsItsTrigger) {
  Plan plan;
  plan.invocations.push_back({"shop", "h", 2, std::chrono::seconds(1), runtime::Trigger::kReplay});
  EXPECT_EQ(encodePlan(plan), "r 2 1000 shop/h\n");
  EXPECT_EQ(decodePlan(encodePlan(plan)), plan);
}

// docs/apps.md "Deadlines": beside the plan, only for the invocations that have any.
TEST(Plan, LimitsAreTheirOwnTextAndApplyByField) {
  Plan plan;
  plan.invocations.push_back({"shop", "bin/a b.sh", 1, std::chrono::seconds(1)});
  plan.invocations.push_back({"shop", "c", 1, std::chrono::seconds(1)});
  EXPECT_EQ(encodeLimits(plan), "");
  plan.invocations[0].deadline = std::chrono::hours(1);
  plan.invocations[0].start_timeout = std::chrono::minutes(5);
  EXPECT_EQ(encodeLimits(plan), "3600000 300000 shop/bin/a b.sh\n");
  Plan decoded = *decodePlan(encodePlan(plan));
  EXPECT_NE(decoded, plan);
  ASSERT_TRUE(applyLimits(decoded, encodeLimits(plan)));
  EXPECT_EQ(decoded, plan);
  for (const char* bad : {"1 2 shop/h", "x 2 shop/h\n", "1 -2 shop/h\n", "1 shop/h\n"}) {
    EXPECT_FALSE(applyLimits(decoded, bad)) << bad;
  }
}

TEST(Plan, RejectsTextOfAnotherShape) {
  for (const char* text :
       {"e 3 20000 shop/h", "x 3 20000 shop/h\n", "e 0 20000 shop/h\n", "e 3 -1 shop/h\n",
        "e 3 20000 shop\n", "e three 1 a/b\n", "e 3 20000 /h\n"}) {
    EXPECT_FALSE(decodePlan(text)) << text;
  }
  EXPECT_EQ(decodePlan(""), Plan{});
}

// docs/pipeline.md "Flow control": the gates are fixed in the plan with the key values the event
// gave, after a tab (a value may hold spaces, never a tab: it is compact JSON).
TEST(Plan, FlowGatesFollowATabWithTheirKeyValues) {
  PlannedInvocation charge{"shop", "charge", 5, std::chrono::seconds(30), runtime::Trigger::kEvent,
                           {}};
  charge.flow.throttles.push_back({FlowScope::kApp, 20, std::chrono::seconds(1), 5});
  charge.flow.throttles.push_back({FlowScope::kRule, 3, std::chrono::minutes(1), 0});
  charge.flow.key = KeyGate{FlowScope::kRule, 2, false, R"("acme corp")"};
  charge.flow.dedupe = DedupeGate{FlowScope::kRule, std::chrono::hours(24), "1234"};
  charge.flow.debounce =
      DebounceGate{FlowScope::kApp, std::chrono::seconds(30), std::chrono::minutes(5), "-"};
  const Plan plan{{charge}};
  const std::string text = encodePlan(plan);
  EXPECT_EQ(text,
            "e 5 30000 shop/charge\tt a 20 1000 5\tt r 3 60000 0\tk r 2 0 \"acme corp\"\t"
            "d r 86400000 1234\tb a 30000 300000 -\n");
  EXPECT_EQ(decodePlan(text), plan);
  PlannedInvocation single{"shop", "h", 1, std::chrono::seconds(1), runtime::Trigger::kEvent, {}};
  single.flow.key = KeyGate{FlowScope::kRule, 1, true, "{\"a\":[1,2]}"};
  EXPECT_EQ(decodePlan(encodePlan(Plan{{single}})), Plan{{single}});
}

TEST(Plan, RejectsFlowGatesOfAnotherShape) {
  for (const char* text :
       {"e 3 20000 shop/h\tt r 0 1000 0\n", "e 3 20000 shop/h\tt x 1 1000 0\n",
        "e 3 20000 shop/h\tk r 2 0\n", "e 3 20000 shop/h\tk r 2 2 v\n", "e 3 20000 shop/h\tq r 1\n",
        "e 3 20000 shop/h\td r 0 v\n", "e 3 20000 shop/h\tb r 10 20\n", "e 3 20000 shop/h\t\n"}) {
    EXPECT_FALSE(decodePlan(text)) << text;
  }
}

}  // namespace
}  // namespace relay::invocation
