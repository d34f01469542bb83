// Crashes, replicas and stops (docs/pipeline.md "Guarantees"), against a real redis-server.
#include <gtest/gtest.h>

#include <thread>

#include "integration/stream/pipeline_fixture.h"

namespace relay::stream::testing {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

constexpr const char* kRecoveryApp = R"(runtime: exec
events:
  - handler: bin/a.sh
    pattern: {kind: [order]}
    timeout: 20s
)";

class Recovery : public PipelineTest {
 protected:
  void SetUp() override {
    PipelineTest::SetUp();
    writeApp("alpha", kRecoveryApp, {"bin/a.sh"});
  }
};

TEST_F(Recovery, ExternallyDeletedPendingEntryIsCountedAsMissingPayloadNotSuccess) {
  build();
  runtime_.failAlways("alpha/bin/a.sh");
  const std::string id = xadd(R"({"kind":"order"})");
  readOnce();
  ASSERT_EQ(pendingCount(), 1);
  ASSERT_TRUE(redis_->command({"XDEL", "events", id}).ok());
  waitForBackoff();  // parked until its retry is due: the due poller finds it gone
  reclaim();
  EXPECT_EQ(pendingCount(), 0);                     // the dangling reference is cleared
  EXPECT_EQ(runtime_.runsOf("alpha/bin/a.sh"), 1);  // no handler run on a made-up payload
  EXPECT_TRUE(dlqEntries().empty());                // and no DLQ entry
  EXPECT_EQ(metrics_.value("relay_missing_payload_total"), 1);
  EXPECT_EQ(marker(id, "relay:retained"), "1");
  EXPECT_NE(log_.str().find("no stream entry"), std::string::npos);
}

TEST_F(Recovery, AWorkerThatDiedMidHandlerIsTakenOverAfterItsClaimExpiresAndTheBackoff) {
  build();
  const std::string id = xadd(R"({"kind":"order"})");
  // Worker A reads the message, claims the invocation (a short lease), starts its handler,
  // then dies.
  auto read =
      redis_->command({"XREADGROUP", "GROUP", "relay", "worker-a", "STREAMS", "events", ">"});
  ASSERT_TRUE(read.ok());
  invocation::PlannedInvocation planned;
  planned.app = "alpha";
  planned.handler = "bin/a.sh";
  planned.max_attempts = 5;
  planned.timeout = seconds(20);
  invocation::StartRequest request;
  request.candidate = invocation::Plan{{planned}};
  request.runnable = {invocation::Runnability::kReady};
  request.token = "dead-token";
  request.consumer = "worker-a";
  request.times = {std::chrono::milliseconds(0), std::chrono::milliseconds(300),
                   std::chrono::milliseconds(0), std::chrono::hours(1),
                   std::chrono::milliseconds(0)};
  auto dead = newStore("worker-a");
  auto claim = dead->start(id, request);
  ASSERT_TRUE(claim.ok()) << claim.error().message;
  ASSERT_EQ(claim->kind, invocation::StartVerdict::Kind::kRun);
  ASSERT_EQ(*dead->begin(id, "alpha/bin/a.sh", "dead-token"), invocation::BeginVerdict::kRunning);
  // Within the claim, a reclaiming replica must not run it again...
  reclaim();
  EXPECT_EQ(runtime_.runsOf("alpha/bin/a.sh"), 0);
  EXPECT_EQ(pendingCount(), 1);
  // ...after it (Redis's clock) the dead worker's attempt counts, as a failure with its
  // backoff: the message is parked until then, and the due poller brings it back.
  real_clock_.sleepFor(std::chrono::milliseconds(350));
  reclaim();
  EXPECT_EQ(runtime_.runsOf("alpha/bin/a.sh"), 0);
  EXPECT_EQ(marker(id, "relay:reason:alpha/bin/a.sh"), "worker lost during attempt 1");
  waitForBackoff();
  auto taken = consumer_->pollDueOnce(*redis_);
  ASSERT_TRUE(taken.ok()) << taken.error().message;
  ASSERT_EQ(*taken, 1);
  ASSERT_EQ(runtime_.runsOf("alpha/bin/a.sh"), 1);
  EXPECT_EQ(runtime_.runs()[0].attempt, 2);
  EXPECT_EQ(pendingCount(), 0);
}

TEST_F(Recovery, ReplicasRacingOnTheSameMessageRunTheHandlerOncePerAttempt) {
  build();
  runtime_.block("alpha/bin/a.sh");
  const std::string id = xadd(R"({"kind":"order"})");
  const StreamEntry entry = entryOf(id);
  std::atomic<bool> stop{false};
  std::vector<std::thread> replicas;
  std::vector<std::unique_ptr<invocation::Lifecycle>> lifecycles;
  for (int i = 0; i < 4; ++i)
    lifecycles.push_back(replicaLifecycle("replica-" + std::to_string(i)));
  std::atomic<int> finished{0};
  auto read =
      redis_->command({"XREADGROUP", "GROUP", "relay", "replica-0", "STREAMS", "events", ">"});
  ASSERT_TRUE(read.ok());
  for (int i = 0; i < 4; ++i) {
    replicas.emplace_back([&, i] {
      // Each takes the message over (a reclaim racing the others), then processes it.
      const std::string name = "replica-" + std::to_string(i);
      auto connection = server().connect();
      (void)connection->command({"XCLAIM", "events", "relay", name, "0", id, "JUSTID"});
      auto store = newStore(name);
      lifecycles[i]->process(*store, entry, stop);
      finished.fetch_add(1);
    });
  }
  ASSERT_TRUE(runtime_.waitRunning(1));
  // The three losers see a live claim and give up without running anything.
  while (finished.load() < 3) real_clock_.sleepFor(std::chrono::milliseconds(5));
  runtime_.unblock("alpha/bin/a.sh");
  for (std::thread& replica : replicas) replica.join();
  EXPECT_EQ(runtime_.runsOf("alpha/bin/a.sh"), 1);
  EXPECT_EQ(marker(id, "alpha/bin/a.sh").substr(0, 12), "succeeded:1:");
}

TEST_F(Recovery, StaleDeliveryAfterTheAckChangesNothing) {
  build();
  const std::string id = xadd(R"({"kind":"order"})");
  readOnce();
  ASSERT_EQ(pendingCount(), 0);
  const std::string before = marker(id, "alpha/bin/a.sh");
  std::atomic<bool> stop{false};
  EXPECT_EQ(lifecycle_->process(*store_, entryOf(id), stop), invocation::Delivery::kStale);
  EXPECT_EQ(runtime_.runsOf("alpha/bin/a.sh"), 1);
  EXPECT_EQ(marker(id, "alpha/bin/a.sh"), before);
}

TEST_F(Recovery, GracefulStopLetsTheRunningHandlerFinishAndLeavesTheRestPending) {
  build();
  runtime_.block("alpha/bin/a.sh");
  const std::string running = xadd(R"({"kind":"order","n":1})");
  std::thread worker([&] { consumer_->run(); });
  ASSERT_TRUE(runtime_.waitRunning(1));
  consumer_->stop();
  // While stopping, new messages are not started.
  const std::string second = xadd(R"({"kind":"order","n":2})");
  real_clock_.sleepFor(std::chrono::milliseconds(50));
  runtime_.unblock("alpha/bin/a.sh");
  worker.join();
  EXPECT_EQ(runtime_.runsOf("alpha/bin/a.sh"), 1);
  EXPECT_EQ(marker(running, "alpha/bin/a.sh").substr(0, 12), "succeeded:1:");
  // The running one was acknowledged; the second is not: either never read (the group's
  // last-delivered id is below it) or still in the PEL.
  auto pending = redis_->command({"XPENDING", "events", "relay", "-", "+", "10"});
  const auto items = pending->elements();
  ASSERT_TRUE(items.ok());
  bool second_pending = false;
  for (std::size_t i = 0; i < items->size(); ++i) {
    const std::string id(*(*items)[i].at(0)->string());
    EXPECT_NE(id, running);
    second_pending = second_pending || id == second;
  }
  auto groups = redis_->command({"XINFO", "GROUPS", "events"});
  auto fields = groups->at(0)->elements();
  std::string last_delivered;
  for (std::size_t i = 0; i + 1 < fields->size(); i += 2) {
    if (*(*fields)[i].string() == "last-delivered-id") {
      last_delivered = std::string(*(*fields)[i + 1].string());
    }
  }
  const bool second_read = last_delivered == second;
  EXPECT_TRUE(second_pending || !second_read) << "second message acknowledged while stopping";
  EXPECT_EQ(marker(second, "alpha/bin/a.sh"), "<nil>");
}

TEST_F(Recovery, RunLoopProcessesMessagesConcurrentlyAcrossMessages) {
  build();
  runtime_.block("alpha/bin/a.sh");
  for (int i = 0; i < 3; ++i) xadd(R"({"kind":"order"})");
  std::thread worker([&] { consumer_->run(); });
  EXPECT_TRUE(runtime_.waitRunning(3));  // three messages' handlers at once
  runtime_.unblock("alpha/bin/a.sh");
  for (int i = 0; i < 200 && pendingCount() + 0 > 0; ++i) {
    real_clock_.sleepFor(std::chrono::milliseconds(10));
  }
  consumer_->stop();
  worker.join();
  EXPECT_EQ(runtime_.runsOf("alpha/bin/a.sh"), 3);
  EXPECT_EQ(pendingCount(), 0);
}

}  // namespace
}  // namespace relay::stream::testing
