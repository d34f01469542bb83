#include "invocation/plan.h"

#include <gtest/gtest.h>

namespace relay::invocation {
namespace {

TEST(Plan, RoundTripsInvocationsInOrder) {
  Plan plan;
  plan.invocations.push_back({"shop", "bin/notify.sh", 3, std::chrono::seconds(20)});
  plan.invocations.push_back(
      {"jobs", "tasks.report.run", 1, std::chrono::minutes(5), runtime::Trigger::kSchedule});
  const std::string text = encodePlan(plan);
  EXPECT_EQ(text, "e 3 20000 shop/bin/notify.sh\ns 1 300000 jobs/tasks.report.run\n");
  EXPECT_EQ(decodePlan(text), plan);
}

TEST(Plan, HandlerNamesMayContainSpacesAndSlashes) {
  Plan plan;
  plan.invocations.push_back({"shop", "bin/my handler.sh", 1, std::chrono::seconds(1)});
  const auto decoded = decodePlan(encodePlan(plan));
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->invocations.at(0).handler, "bin/my handler.sh");
  EXPECT_EQ(decoded->invocations.at(0).app, "shop");
}

TEST(Plan, RejectsTextOfAnotherShape) {
  for (const char* text :
       {"e 3 20000 shop/h", "x 3 20000 shop/h\n", "e 0 20000 shop/h\n", "e 3 -1 shop/h\n",
        "e 3 20000 shop\n", "e three 1 a/b\n", "e 3 20000 /h\n"}) {
    EXPECT_FALSE(decodePlan(text)) << text;
  }
  EXPECT_EQ(decodePlan(""), Plan{});
}

}  // namespace
}  // namespace relay::invocation
