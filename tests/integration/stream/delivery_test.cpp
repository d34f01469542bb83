// docs/pipeline.md "Reading", "One message", "Retries", "State in Redis", against a real
// redis-server.
#include <gtest/gtest.h>

#include "integration/stream/pipeline_fixture.h"

namespace relay::stream::testing {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

constexpr const char* kOrders = R"(runtime: exec
events:
  - handler: bin/notify.sh
    pattern: {kind: [order]}
    retries: 2
  - handler: bin/big.sh
    pattern: {kind: [order], amount: [{gt: 100}]}
)";

class Delivery : public PipelineTest {
 protected:
  void SetUp() override {
    PipelineTest::SetUp();
    writeApp("shop", kOrders, {"bin/notify.sh", "bin/big.sh"});
  }
};

TEST_F(Delivery, UnmatchedEventIsAcknowledgedAndNeverRetried) {
  build();
  const std::string id = xadd(R"({"kind":"refund"})");
  EXPECT_EQ(readOnce(), 1);
  EXPECT_EQ(pendingCount(), 0);
  EXPECT_TRUE(runtime_.runs().empty());
  EXPECT_EQ(metrics_.value("relay_events_total", {{"outcome", "unmatched"}}), 1);
  EXPECT_EQ(*redis_->command({"EXISTS", keys_.state(id)})->integer(), 0);
}

TEST_F(Delivery, MatchedEventRunsEveryMatchingRuleInOrderThenAcks) {
  build();
  const std::string event = R"({"kind":"order","amount":250})";
  const std::string id = xadd(event);
  EXPECT_EQ(readOnce(), 1);
  const auto runs = runtime_.runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].handler, "bin/notify.sh");
  EXPECT_EQ(runs[1].handler, "bin/big.sh");
  EXPECT_EQ(runs[0].input, event);  // verbatim
  EXPECT_EQ(runs[0].message_id, id);
  EXPECT_EQ(runs[0].attempt, 1);
  EXPECT_EQ(pendingCount(), 0);
  EXPECT_EQ(marker(id, "shop/bin/notify.sh").substr(0, 12), "succeeded:1:");
  EXPECT_EQ(marker(id, "relay:retained"), "1");
  EXPECT_EQ(metrics_.value("relay_invocations_total",
                           {{"app", "shop"}, {"handler", "bin/big.sh"}, {"outcome", "succeeded"}}),
            1);
}

TEST_F(Delivery, AppsRunInSortedNameOrder) {
  writeApp("aardvark",
           "runtime: exec\nevents:\n  - handler: bin/z.sh\n    pattern: {kind: [order]}\n",
           {"bin/z.sh"});
  writeApp("zebra", "runtime: exec\nevents:\n  - handler: bin/a.sh\n    pattern: {kind: [order]}\n",
           {"bin/a.sh"});
  build();
  xadd(R"({"kind":"order"})");
  readOnce();
  const auto runs = runtime_.runs();
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].app, "aardvark");
  EXPECT_EQ(runs[1].app, "shop");
  EXPECT_EQ(runs[2].app, "zebra");
}

TEST_F(Delivery, OneFailingHandlerDoesNotStopTheOthers) {
  build();
  runtime_.failAlways("shop/bin/notify.sh", "exit 3");
  const std::string id = xadd(R"({"kind":"order","amount":250})");
  readOnce();
  EXPECT_EQ(runtime_.runsOf("shop/bin/big.sh"), 1);
  EXPECT_EQ(marker(id, "shop/bin/big.sh").substr(0, 12), "succeeded:1:");
  EXPECT_EQ(pendingCount(), 1);           // not every invocation is terminal
  EXPECT_EQ(ttlOf(keys_.state(id)), -1);  // pending: no TTL
}

TEST_F(Delivery, RetryWaitsForTheBackoffAndCountsRealExecutions) {
  build();
  runtime_.script("shop/bin/notify.sh", {"exit 1", ""});
  const std::string id = xadd(R"({"kind":"order"})");
  readOnce();
  EXPECT_EQ(runtime_.runsOf("shop/bin/notify.sh"), 1);
  // Redelivered before next_attempt_at: skipped without executing, many times over.
  for (int i = 0; i < 3; ++i) reclaim();
  EXPECT_EQ(runtime_.runsOf("shop/bin/notify.sh"), 1);
  EXPECT_EQ(pendingCount(), 1);
  waitForBackoff();
  reclaim();
  const auto runs = runtime_.runs();
  ASSERT_EQ(runtime_.runsOf("shop/bin/notify.sh"), 2);
  EXPECT_EQ(runs.back().attempt, 2);
  EXPECT_EQ(pendingCount(), 0);
  EXPECT_EQ(marker(id, "shop/bin/notify.sh").substr(0, 12), "succeeded:2:");
  // The PEL's delivery count (4 reclaims + 1 read) is not the attempt count (2).
}

TEST_F(Delivery, SucceededInvocationIsNotRerunWhenTheMessageIsRedelivered) {
  build();
  runtime_.script("shop/bin/big.sh", {"exit 1", ""});
  xadd(R"({"kind":"order","amount":500})");
  readOnce();
  waitForBackoff();
  reclaim();
  EXPECT_EQ(runtime_.runsOf("shop/bin/notify.sh"), 1);
  EXPECT_EQ(runtime_.runsOf("shop/bin/big.sh"), 2);
  EXPECT_EQ(pendingCount(), 0);
}

TEST_F(Delivery, UnavailableAppLeavesTheMessagePendingWithoutChargingAnAttempt) {
  runtime_.setUnavailable("shop/bin/notify.sh", true);
  build();
  const std::string id = xadd(R"({"kind":"order"})");
  for (int i = 0; i < 10; ++i) {
    if (i == 0) {
      readOnce();
    } else {
      clock_.advance(minutes(10));
      reclaim();
    }
  }
  EXPECT_EQ(runtime_.runsOf("shop/bin/notify.sh"), 0);
  EXPECT_EQ(pendingCount(), 1);
  EXPECT_TRUE(dlqEntries().empty());  // never dead-lettered for unavailability alone
  EXPECT_EQ(marker(id, "shop/bin/notify.sh"), "<nil>");
  EXPECT_GE(
      metrics_.value("relay_invocations_total",
                     {{"app", "shop"}, {"handler", "bin/notify.sh"}, {"outcome", "unavailable"}}),
      1);
  // Once it is available again the same message completes, when it is due again (parked
  // until then for whichever worker can run it: docs/pipeline.md "Waiting").
  runtime_.setUnavailable("shop/bin/notify.sh", false);
  registry_->refreshAvailability();
  waitForBackoff();
  reclaim();
  EXPECT_EQ(runtime_.runsOf("shop/bin/notify.sh"), 1);
  EXPECT_EQ(pendingCount(), 0);
}

TEST_F(Delivery, RuntimeUnavailableAtRunTimeGivesTheClaimBack) {
  build();                                              // available at load...
  runtime_.setUnavailable("shop/bin/notify.sh", true);  // ...not when the handler starts
  const std::string id = xadd(R"({"kind":"order"})");
  readOnce();
  // The claim was given back: no attempt counted.
  EXPECT_EQ(marker(id, "shop/bin/notify.sh").substr(0, 9), "failed:0:");
  EXPECT_EQ(pendingCount(), 1);
}

TEST_F(Delivery, InvalidTemplateKeepsItsRulesAndLeavesMatchedMessagesPending) {
  build();
  apps_.write("shop/template.yaml", "runtime: exec\nevents: [oops\n");
  registry_->reloadAll();
  const std::string id = xadd(R"({"kind":"order"})");
  readOnce();
  EXPECT_TRUE(runtime_.runs().empty());
  EXPECT_EQ(pendingCount(), 1);  // matched (by the last valid rules), not unmatched
  EXPECT_EQ(metrics_.value("relay_events_total", {{"outcome", "matched"}}), 1);
}

TEST_F(Delivery, NoFreeConcurrencySlotLeavesThePendingMessageUncharged) {
  build(/*max_concurrency=*/1);
  auto held = limiter_->acquire("other", 1, std::chrono::milliseconds(0));
  ASSERT_TRUE(held);
  const std::string id = xadd(R"({"kind":"order"})");
  readOnce();
  EXPECT_TRUE(runtime_.runs().empty());
  EXPECT_EQ(pendingCount(), 1);
  EXPECT_EQ(marker(id, "shop/bin/notify.sh"), "<nil>");  // nothing claimed before a slot
  held.reset();
  reclaim();
  EXPECT_EQ(runtime_.runsOf("shop/bin/notify.sh"), 1);
}

TEST_F(Delivery, PerAppConcurrencyIsTheSmallerOfTheAppsAndTheWorkersCap) {
  writeApp("slow",
           "runtime: exec\nconcurrency: 1\nevents:\n  - handler: bin/s.sh\n"
           "    pattern: {kind: [slow]}\n",
           {"bin/s.sh"});
  build();
  runtime_.block("slow/bin/s.sh");
  xadd(R"({"kind":"slow"})");
  xadd(R"({"kind":"slow"})");
  auto worker_a = replicaLifecycle("a");
  std::thread first([&] {
    auto connection = server().connect();
    auto entries = connection->command(
        {"XREADGROUP", "GROUP", "relay", "a", "COUNT", "1", "STREAMS", "events", ">"});
    auto parsed = parseReadGroup(entries->view());
    std::atomic<bool> stop{false};
    auto store = newStore("a");
    worker_a->process(*store, parsed->at(0), stop);
  });
  ASSERT_TRUE(runtime_.waitRunning(1));
  readOnce();  // the second message finds the app's only slot taken
  EXPECT_EQ(runtime_.runsOf("slow/bin/s.sh"), 1);
  runtime_.unblock("slow/bin/s.sh");
  first.join();
  reclaim();
  EXPECT_EQ(runtime_.runsOf("slow/bin/s.sh"), 2);
  EXPECT_EQ(pendingCount(), 0);
}

TEST_F(Delivery, ClaimErrorFailsClosed) {
  build();
  const std::string id = xadd(R"({"kind":"order"})");
  // The state key of the wrong type makes every TryStart fail.
  ASSERT_TRUE(redis_->command({"SET", keys_.state(id), "not a hash"}).ok());
  readOnce();
  EXPECT_TRUE(runtime_.runs().empty());
  EXPECT_EQ(pendingCount(), 1);
  EXPECT_GE(metrics_.value("relay_redis_errors_total", {{"op", "try_start"}}), 1);
}

TEST_F(Delivery, PendingStateHasNoTtlAndTheAckSetsTheRetentionTtl) {
  retention_ = std::chrono::hours(1);
  build();
  runtime_.script("shop/bin/notify.sh", {"exit 1", ""});
  const std::string id = xadd(R"({"kind":"order"})");
  readOnce();
  EXPECT_EQ(ttlOf(keys_.state(id)), -1);
  waitForBackoff();  // real time passes on Redis's clock: still no TTL while pending
  EXPECT_EQ(ttlOf(keys_.state(id)), -1);
  reclaim();
  EXPECT_EQ(pendingCount(), 0);
  const long long ttl = ttlOf(keys_.state(id));
  EXPECT_GT(ttl, 3'500'000);
  EXPECT_LE(ttl, 3'600'000);
  EXPECT_EQ(marker(id, "relay:retained"), "1");
}

}  // namespace
}  // namespace relay::stream::testing
