// Issue 13's delivery contract under real operations, against a real redis-server: the plan
// recorded at the first execution (item 1), one clock for every replica (item 5), retention on
// every path out of the PEL (item 6), and a worker started while a template is invalid (item 7).
#include <gtest/gtest.h>

#include "common/rfc3339.h"
#include "integration/stream/pipeline_fixture.h"
#include "invocation/marker.h"
#include "schedule/occurrence.h"
#include "worker/redis_template_keeper.h"

namespace relay::stream::testing {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

constexpr const char* kRecent = R"(runtime: exec
events:
  - handler: bin/recent.sh
    pattern: {at: [{gt: "now()-20s"}]}
)";

class DeliveryContract : public PipelineTest {};

TEST_F(DeliveryContract, ATemporalRuleThatNoLongerMatchesOnRedeliveryStillGetsItsRetry) {
  writeApp("audit", kRecent, {"bin/recent.sh"});
  build();
  runtime_.script("audit/bin/recent.sh", {"exit 1", ""});
  const std::string id = xadd(R"({"at":")" + formatRfc3339(clock_.now()) + R"("})");
  readOnce();
  ASSERT_EQ(runtime_.runsOf("audit/bin/recent.sh"), 1);
  clock_.advance(minutes(1));  // the event is no longer "recent" for any classification now
  waitForBackoff();
  reclaim();
  EXPECT_EQ(runtime_.runsOf("audit/bin/recent.sh"), 2);
  EXPECT_EQ(runtime_.runs().back().attempt, 2);
  EXPECT_EQ(pendingCount(), 0);
  EXPECT_EQ(marker(id, "audit/bin/recent.sh").substr(0, 12), "succeeded:2:");
  EXPECT_EQ(metrics_.value("relay_events_total", {{"outcome", "unmatched"}}), 0);
}

TEST_F(DeliveryContract, ATemplateEditBetweenAttemptsDoesNotChangeWhatTheMessageOwes) {
  writeApp("shop",
           "runtime: exec\nevents:\n  - handler: bin/a.sh\n    pattern: {kind: [order]}\n"
           "  - handler: bin/b.sh\n    pattern: {kind: [order]}\n",
           {"bin/a.sh", "bin/b.sh", "bin/c.sh"});
  build();
  runtime_.script("shop/bin/a.sh", {"exit 1", ""});
  const std::string id = xadd(R"({"kind":"order"})");
  readOnce();
  // The edit: b no longer matches orders, c does.
  apps_.write("shop/template.yaml",
              "runtime: exec\nevents:\n  - handler: bin/a.sh\n    pattern: {kind: [order]}\n"
              "  - handler: bin/b.sh\n    pattern: {kind: [refund]}\n"
              "  - handler: bin/c.sh\n    pattern: {kind: [order]}\n");
  registry_->reloadAll();
  waitForBackoff();
  reclaim();
  EXPECT_EQ(runtime_.runsOf("shop/bin/a.sh"), 2);
  EXPECT_EQ(runtime_.runsOf("shop/bin/b.sh"), 1);
  EXPECT_EQ(runtime_.runsOf("shop/bin/c.sh"), 0);
  EXPECT_EQ(pendingCount(), 0);
  EXPECT_EQ(marker(id, "relay:plan"), "e 5 30000 shop/bin/a.sh\ne 5 30000 shop/bin/b.sh\n");
}

TEST_F(DeliveryContract, TheAckIsRefusedWhileAnInvocationIsNotTerminal) {
  writeApp("shop", "runtime: exec\nevents:\n  - handler: bin/a.sh\n    pattern: {kind: [order]}\n",
           {"bin/a.sh"});
  build();
  runtime_.failAlways("shop/bin/a.sh");
  const std::string id = xadd(R"({"kind":"order"})");
  readOnce();
  auto acked = store_->acknowledge(id);
  ASSERT_TRUE(acked.ok()) << acked.error().message;
  EXPECT_EQ(acked->kind, invocation::AckVerdict::Kind::kUnresolved);
  EXPECT_EQ(pendingCount(), 1);
  // Every rule removed: the redelivery's "unmatched" cannot acknowledge it either.
  apps_.write("shop/template.yaml", "runtime: exec\n");
  registry_->reloadAll();
  reclaim();
  EXPECT_EQ(pendingCount(), 1);
  EXPECT_EQ(marker(id, "relay:retained"), "<nil>");
}

TEST_F(DeliveryContract, ReplicasWhoseClocksDifferByTenMinutesNeitherDoubleRunNorSkipTheBackoff) {
  writeApp("shop", "runtime: exec\nevents:\n  - handler: bin/a.sh\n    pattern: {kind: [order]}\n",
           {"bin/a.sh"});
  build();
  relay::testing::FakeClock ahead(clock_.now() + minutes(10));
  auto replica = replicaLifecycle("worker-2", &ahead);
  auto replica_store = newStore("worker-2");
  const std::atomic<bool> stopping{false};
  runtime_.script("shop/bin/a.sh", {"exit 1", ""});
  runtime_.block("shop/bin/a.sh");
  const std::string id = xadd(R"({"kind":"order"})");
  std::thread first([&] { readOnce(); });
  ASSERT_TRUE(runtime_.waitRunning(1));
  // Ten minutes ahead, the replica (having taken the message over) still sees a live claim
  // (Redis's clock decides).
  claimFor(id, "worker-2");
  EXPECT_EQ(replica->process(*replica_store, entryOf(id), stopping),
            invocation::Delivery::kPending);
  claimFor(id, "worker-1");  // the owner's renewal takes it back
  runtime_.unblock("shop/bin/a.sh");
  first.join();
  ASSERT_EQ(marker(id, "shop/bin/a.sh").substr(0, 9), "failed:1:");
  // ...and the backoff is not shortened by its clock either.
  claimFor(id, "worker-2");
  EXPECT_EQ(replica->process(*replica_store, entryOf(id), stopping),
            invocation::Delivery::kPending);
  EXPECT_EQ(runtime_.runsOf("shop/bin/a.sh"), 1);
  waitForBackoff();
  claimFor(id, "worker-2");
  EXPECT_EQ(replica->process(*replica_store, entryOf(id), stopping), invocation::Delivery::kAcked);
  EXPECT_EQ(runtime_.runsOf("shop/bin/a.sh"), 2);
}

TEST_F(DeliveryContract, ARetryRunsWhenItsBackoffEndsThroughTheDueIndexNotTheSweep) {
  writeApp("shop", "runtime: exec\nevents:\n  - handler: bin/a.sh\n    pattern: {kind: [order]}\n",
           {"bin/a.sh"});
  build();
  runtime_.script("shop/bin/a.sh", {"exit 1", ""});
  const std::string id = xadd(R"({"kind":"order"})");
  readOnce();
  auto score = redis_->command({"ZSCORE", keys_.due(), id});
  ASSERT_TRUE(score->optionalString()->has_value());
  const auto marker_now = invocation::Marker::parse(marker(id, "shop/bin/a.sh"));
  ASSERT_TRUE(marker_now);
  EXPECT_EQ(std::stoll(std::string(**score->optionalString())), marker_now->next_attempt_ms);
  EXPECT_EQ(*consumer_->pollDueOnce(*redis_), 0);  // not due yet
  waitForBackoff();
  EXPECT_EQ(*consumer_->pollDueOnce(*redis_), 1);
  EXPECT_EQ(runtime_.runsOf("shop/bin/a.sh"), 2);
  EXPECT_EQ(pendingCount(), 0);
  EXPECT_EQ(*redis_->command({"EXISTS", keys_.due()})->integer(), 0);
}

TEST_F(DeliveryContract,
       AnOccurrenceWhoseScheduleWasRemovedAfterAFailureLeavesWithItsStateRetained) {
  writeApp("jobs",
           "runtime: exec\nschedules:\n  - name: tick\n    cron: \"* * * * *\"\n"
           "    handler: bin/t.sh\n",
           {"bin/t.sh"});
  build();
  runtime_.failAlways("jobs/bin/t.sh");
  const schedule::Occurrence occurrence{"jobs", "tick", WallTime(std::chrono::seconds(1715821200))};
  const std::string id = xaddFields({std::string(schedule::kEnvelopeField), occurrence.envelope(),
                                     "event", occurrence.payload("{}")});
  readOnce();
  ASSERT_EQ(marker(id, "jobs/bin/t.sh").substr(0, 9), "failed:1:");
  apps_.write("jobs/template.yaml", "runtime: exec\n");
  registry_->reloadAll();
  waitForBackoff();
  reclaim();
  EXPECT_EQ(pendingCount(), 1) << "left for a worker that may know the schedule, for an hour";
  clock_.setWall(real_clock_.now() + std::chrono::hours(1) + std::chrono::minutes(1));
  reclaim();
  EXPECT_EQ(pendingCount(), 0);
  EXPECT_EQ(runtime_.runsOf("jobs/bin/t.sh"), 1);
  EXPECT_EQ(marker(id, "relay:retained"), "1");
  EXPECT_GT(ttlOf(keys_.state(id)), 0);
  EXPECT_EQ(metrics_.value("relay_events_total", {{"outcome", "obsolete_schedule"}}), 1);
}

// Item 7: a worker (re)started while a template is invalid uses the last valid template kept in
// Redis by a worker that loaded it.
class BadDeploy : public PipelineTest {
 protected:
  void buildWithKeeper() {
    keeper_ = std::make_unique<worker::RedisTemplateKeeper>(server().endpoint(), keys_, metrics_,
                                                            logger_);
    keeper_hook_ = keeper_->keeper();
    build();
  }
  std::unique_ptr<worker::RedisTemplateKeeper> keeper_;
};

TEST_F(BadDeploy, AWorkerStartedWithAnInvalidTemplateKeepsTheAppsEventsPending) {
  constexpr const char* kValid =
      "runtime: exec\nevents:\n  - handler: bin/a.sh\n    pattern: {kind: [order]}\n"
      "schedules:\n  - name: tick\n    cron: \"* * * * *\"\n    handler: bin/a.sh\n";
  writeApp("shop", kValid, {"bin/a.sh"});
  buildWithKeeper();  // the first worker: valid, kept in Redis
  auto kept = redis_->command({"GET", keys_.appTemplate("shop")});
  ASSERT_TRUE(kept.ok() && kept->optionalString()->has_value()) << log_.str();
  EXPECT_EQ(**kept->optionalString(), kValid);
  apps_.write("shop/template.yaml", "runtime: exec\nevents: [oops\n");
  buildWithKeeper();  // a restart (or another replica) with the broken deploy
  const auto entry = registry_->snapshot()->find("shop");
  ASSERT_TRUE(entry && entry->app);
  EXPECT_FALSE(entry->status.available);
  const std::string matched = xadd(R"({"kind":"order"})");
  const schedule::Occurrence occurrence{"shop", "tick", WallTime(std::chrono::seconds(1715821200))};
  xaddFields({std::string(schedule::kEnvelopeField), occurrence.envelope(), "event",
              occurrence.payload("{}")});
  const std::string unmatched = xadd(R"({"kind":"refund"})");
  EXPECT_EQ(readOnce(), 3);
  EXPECT_TRUE(runtime_.runs().empty());
  EXPECT_EQ(pendingCount(), 2);  // the order and the occurrence wait; the refund was unmatched
  EXPECT_EQ(metrics_.value("relay_events_total", {{"outcome", "unmatched"}}), 1);
  EXPECT_EQ(metrics_.value("relay_events_total", {{"outcome", "obsolete_schedule"}}), 0);
  EXPECT_EQ(marker(matched, "shop/bin/a.sh"), "<nil>");  // nothing charged
  // The fix is deployed: the same messages complete once they are due again (parked for any
  // worker that can run them, docs/pipeline.md "Waiting").
  apps_.write("shop/template.yaml", kValid);
  registry_->reloadAll();
  waitForBackoff();
  reclaim();
  EXPECT_EQ(pendingCount(), 0);
  EXPECT_EQ(runtime_.runsOf("shop/bin/a.sh"), 2);
}

TEST_F(BadDeploy, WithoutAnyKnownRulesEveryEventWaitsInsteadOfBeingCalledUnmatched) {
  writeApp("shop", "runtime: exec\nevents: [oops\n", {"bin/a.sh"});
  writeApp("other", "runtime: exec\nevents:\n  - handler: bin/o.sh\n    pattern: {kind: [other]}\n",
           {"bin/o.sh"});
  buildWithKeeper();  // nothing kept for shop: its rules are unknown
  xadd(R"({"kind":"order"})");
  xadd(R"({"kind":"other"})");
  EXPECT_EQ(readOnce(), 2);
  EXPECT_EQ(pendingCount(), 2);
  EXPECT_TRUE(runtime_.runs().empty());
  EXPECT_EQ(metrics_.value("relay_events_total", {{"outcome", "unmatched"}}), 0);
  EXPECT_NE(log_.str().find("app shop has no valid template yet"), std::string::npos);
}

}  // namespace
}  // namespace relay::stream::testing
