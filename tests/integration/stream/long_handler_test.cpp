// Issue 13 item 4 against a real redis-server and real PEL idle times: two replicas run their
// whole worker loops (reader, due poller, reclaimer, renewer) with the reclaim idle time and the
// claim lease shortened to a fraction of how long the handler runs (the stand-in for a
// 240-second handler against the 1-minute MinPendingIdle). The running replica keeps its claim
// and its message; the other never takes it over and never runs the next handler early.
#include <gtest/gtest.h>

#include "integration/stream/pipeline_fixture.h"

namespace relay::stream::testing {
namespace {

using std::chrono::milliseconds;

constexpr const char* kLong = R"(runtime: exec
events:
  - handler: bin/long.sh
    pattern: {kind: [order]}
    timeout: 240s
  - handler: bin/next.sh
    pattern: {kind: [order]}
)";

/// One replica: its own renewer and consumer on the real clock.
struct Replica {
  std::unique_ptr<invocation::RedisLifecycleStore> renewer_store;
  std::unique_ptr<invocation::ClaimRenewer> renewer;
  std::unique_ptr<invocation::Lifecycle> lifecycle;
  std::unique_ptr<Consumer> consumer;
  std::thread renewing;
  std::thread consuming;
};

class LongHandler : public PipelineTest {
 protected:
  std::unique_ptr<Replica> start(const std::string& name) {
    auto replica = std::make_unique<Replica>();
    invocation::RedisStoreSettings store;
    store.keys = keys_;
    store.consumer = name;
    replica->renewer_store =
        std::make_unique<invocation::RedisLifecycleStore>(store, server().endpoint(), real_clock_);
    invocation::RenewerSettings renewal;
    renewal.interval = milliseconds(50);
    renewal.claim = claims_;
    replica->renewer = std::make_unique<invocation::ClaimRenewer>(renewal, *replica->renewer_store,
                                                                  metrics_, logger_, real_clock_);
    invocation::LifecycleSettings settings = lifecycle_settings_;
    settings.consumer = name;
    settings.claim = claims_;
    replica->lifecycle = std::make_unique<invocation::Lifecycle>(
        settings, *catalog_, runtime_, *limiter_, replica->renewer.get(), observer_, metrics_,
        logger_, real_clock_, random_);
    ConsumerSettings consumer;
    consumer.consumer = name;
    consumer.block = milliseconds(20);
    consumer.reclaim_interval = milliseconds(50);
    consumer.min_pending_idle = milliseconds(200);
    consumer.due_poll = milliseconds(50);
    consumer.due.min_idle = milliseconds(200);
    consumer.workers = 4;
    replica->consumer = std::make_unique<Consumer>(
        consumer, server().endpoint(), *replica->lifecycle,
        [this, store]() -> std::unique_ptr<invocation::LifecycleStore> {
          return std::make_unique<invocation::RedisLifecycleStore>(store, server().endpoint(),
                                                                   real_clock_);
        },
        metrics_, logger_, real_clock_);
    Replica* r = replica.get();
    r->renewing = std::thread([r] { r->renewer->run(); });
    r->consuming = std::thread([r] { r->consumer->run(); });
    return replica;
  }
  static void stop(Replica& replica) {
    replica.consumer->stop();
    replica.consuming.join();
    replica.renewer->stop();
    replica.renewing.join();
  }

  // A claim lease of 150 ms (+50 ms margin) and a reclaim idle time of 200 ms, against a
  // handler that runs 1.5 s: without renewal both run out many times over.
  const invocation::ClaimTimes claims_{milliseconds(0), milliseconds(150), milliseconds(50)};
};

TEST_F(LongHandler, ARunningHandlerKeepsItsMessageAndTheNextHandlerWaitsItsTurn) {
  writeApp("shop", kLong, {"bin/long.sh", "bin/next.sh"});
  build();
  runtime_.block("shop/bin/long.sh");
  auto first = start("replica-1");
  const std::string id = xadd(R"({"kind":"order"})");
  ASSERT_TRUE(runtime_.waitRunning(1));
  auto second = start("replica-2");
  real_clock_.sleepFor(milliseconds(1500));  // many reclaim sweeps and due polls by both
  EXPECT_EQ(runtime_.runsOf("shop/bin/long.sh"), 1);
  EXPECT_EQ(runtime_.runsOf("shop/bin/next.sh"), 0);  // not skipped ahead of the busy one
  auto owner = redis_->command({"XPENDING", "events", "relay", "-", "+", "10"});
  ASSERT_EQ(owner->size(), 1u);
  EXPECT_EQ(std::string(*owner->at(0)->at(1)->string()), "replica-1");  // never taken over
  EXPECT_LT(*owner->at(0)->at(2)->integer(), 1000);  // idle kept fresh (it ran for 1.5 s)
  runtime_.unblock("shop/bin/long.sh");
  for (int i = 0; i < 200 && pendingCount() > 0; ++i) real_clock_.sleepFor(milliseconds(10));
  stop(*first);
  stop(*second);
  const auto runs = runtime_.runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].handler, "bin/long.sh");
  EXPECT_EQ(runs[1].handler, "bin/next.sh");
  EXPECT_EQ(pendingCount(), 0);
}

}  // namespace
}  // namespace relay::stream::testing
