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

// docs/apps.md "Flow control": a waiting invocation's reason and earliest start, a retry-after
// deferral, and the message that deduplicated or superseded one.
TEST(InvocationsJson, FlowControlWaitsAndOutcomesAreShown) {
  invocation::Plan plan;
  plan.invocations.push_back({"shop", "bin/pay.sh", 3});
  plan.invocations.push_back({"shop", "bin/sync.sh", 3});
  plan.invocations.push_back({"shop", "bin/digest.sh", 1});
  plan.invocations.push_back({"shop", "bin/mail.sh", 1});
  plan.invocations.push_back({"shop", "bin/once.sh", 1});
  plan.invocations.push_back({"shop", "bin/call.sh", 4});
  const std::string wait(invocation::kWaitPrefix);
  const Json json =
      invocationsJson({{std::string(invocation::kPlanField), invocation::encodePlan(plan)},
                       {wait + "shop/bin/pay.sh", "throttled:1790000005000"},
                       {wait + "shop/bin/sync.sh", "key_busy:0"},
                       {wait + "shop/bin/digest.sh", "debounced:1790000030000"},
                       {"shop/bin/mail.sh", "superseded:0:1790000000000-1"},
                       {"shop/bin/once.sh", "deduplicated:0:1780000000000-0"},
                       {"shop/bin/call.sh", "deferred:1:1790000030000:tok"}},
                      {});
  ASSERT_EQ(json.size(), 6u) << json.dump();
  EXPECT_EQ(json[0]["state"], "planned");
  EXPECT_EQ(json[0]["wait"], Json::parse(R"({"reason":"throttled","until_ms":1790000005000})"));
  EXPECT_EQ(json[1]["wait"], Json::parse(R"({"reason":"key_busy","until_ms":0})"));
  EXPECT_EQ(json[2]["wait"]["reason"], "debounced");
  EXPECT_EQ(json[3]["state"], "superseded");
  EXPECT_EQ(json[3]["by"], "1790000000000-1");
  EXPECT_EQ(json[4]["state"], "deduplicated");
  EXPECT_EQ(json[4]["by"], "1780000000000-0");
  EXPECT_EQ(json[5]["state"], "retry_after");
  EXPECT_EQ(json[5]["attempt"], 1);
  EXPECT_EQ(json[5]["next_attempt_ms"], 1790000030000);
  EXPECT_FALSE(json[5].contains("wait"));
}

}  // namespace
}  // namespace relay::console
