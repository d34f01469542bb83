// The Pending page's view of a message's invocations: markers decoded by invocation::Marker,
// joined with the attempt journal.
#include "console/pending_api.h"

#include <gtest/gtest.h>

#include "invocation/keys.h"
#include "invocation/plan.h"

namespace relay::console {
namespace {

TEST(InvocationsJson, ARunningInvocationShowsWhereAndSinceWhenFromTheJournal) {
  std::vector<invocation::AttemptRecord> journal(2);
  journal[0] = {"shop", "bin/pay.sh", 1, "w1", 1000, 2000, "failed", "exit 3", 1000};
  journal[1] = {"shop", "bin/pay.sh", 2, "w2", 5000, 0, "", "", 0};
  const Json json = invocationsJson({{"shop/bin/pay.sh", "running:2:tok:99000"}}, journal);
  ASSERT_EQ(json.size(), 1u);
  EXPECT_EQ(json[0]["state"], "running");
  EXPECT_EQ(json[0]["attempt"], 2);
  EXPECT_EQ(json[0]["claim_deadline_ms"], 99000);
  EXPECT_EQ(json[0]["running_on"], "w2");
  EXPECT_EQ(json[0]["running_since_ms"], 5000);
  EXPECT_EQ(json[0]["attempts"].size(), 2u);
}

TEST(InvocationsJson, FailedSucceededAndExhaustedMarkersAreDecoded) {
  const Json json = invocationsJson({{"a/x", "failed:1:61000"},
                                     {"a/y", "succeeded:1"},
                                     {"b/z", "exhausted:5:tok:dlq"},
                                     {"relay:retained", "1"},
                                     {"b/w", "garbage"}},
                                    {});
  ASSERT_EQ(json.size(), 4u);  // the reserved field is not an invocation
  EXPECT_EQ(json[0]["state"], "failed");
  EXPECT_EQ(json[0]["next_attempt_ms"], 61000);
  EXPECT_EQ(json[1]["state"], "succeeded");
  EXPECT_EQ(json[2]["state"], "exhausted");
  EXPECT_EQ(json[2]["dlq_written"], true);
  EXPECT_EQ(json[3]["state"], "unknown");
  EXPECT_EQ(json[3]["marker"], "garbage");
}

TEST(InvocationsJson, ThePlanOrdersThemAndShowsBudgetsUnstartedOnesAndTheLastFailure) {
  invocation::Plan plan;
  plan.invocations.push_back({"shop", "bin/pay.sh", 3});
  plan.invocations.push_back({"audit", "bin/log.sh", 1});
  const Json json =
      invocationsJson({{"shop/bin/pay.sh", "failed:1:61000:tok"},
                       {std::string(invocation::kPlanField), invocation::encodePlan(plan)},
                       {std::string(invocation::kReasonPrefix) + "shop/bin/pay.sh", "exit 3"},
                       {std::string(invocation::kTailPrefix) + "shop/bin/pay.sh",
                        "[shop/bin/pay.sh] card declined"}},
                      {});
  ASSERT_EQ(json.size(), 2u);
  EXPECT_EQ(json[0]["handler"], "bin/pay.sh");
  EXPECT_EQ(json[0]["state"], "failed");
  EXPECT_EQ(json[0]["max_attempts"], 3);
  EXPECT_EQ(json[0]["exit_reason"], "exit 3");
  EXPECT_EQ(json[0]["output_tail"], "[shop/bin/pay.sh] card declined");
  EXPECT_EQ(json[1]["app"], "audit");
  EXPECT_EQ(json[1]["state"], "planned");
  EXPECT_EQ(json[1]["max_attempts"], 1);
  EXPECT_FALSE(json[1].contains("output_tail"));
}

}  // namespace
}  // namespace relay::console
