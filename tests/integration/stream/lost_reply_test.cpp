// Issue 13 item 2 against a real redis-server: replies lost after the script ran (a proxy
// forwards the request, then drops the reply and the connection). Every verb is idempotent for
// its token, so nothing is charged twice, nothing unstarted is charged, nothing is re-run.
#include <gtest/gtest.h>

#include "integration/stream/pipeline_fixture.h"
#include "invocation/lifecycle_scripts.h"
#include "support/reply_dropping_proxy.h"

namespace relay::stream::testing {
namespace {

constexpr const char* kNoRetries = R"(runtime: exec
events:
  - handler: bin/a.sh
    pattern: {kind: [order]}
    retries: 0
)";

// With GetParam(): the proxied store sends its calls through a group commit on the same proxy,
// as a worker's do; the reply lost is then the group's, and the call runs again alone.
class LostReply : public PipelineTest, public ::testing::WithParamInterface<bool> {
 protected:
  void SetUp() override {
    PipelineTest::SetUp();
    writeApp("shop", kNoRetries, {"bin/a.sh"});
    build();
    auto proxy = relay::testing::ReplyDroppingProxy::create(server().port());
    ASSERT_TRUE(proxy.ok()) << proxy.error().message;
    proxy_ = std::move(proxy).value();
    // Cached scripts: the reply that is lost is the script's own, never a NOSCRIPT.
    const invocation::LifecycleScripts& scripts = invocation::LifecycleScripts::shared();
    for (const redis::Script* script : {&scripts.start, &scripts.complete, &scripts.release}) {
      ASSERT_TRUE(redis_->command({"SCRIPT", "LOAD", script->source()}).ok());
    }
    invocation::RedisStoreSettings settings;
    settings.keys = keys_;
    settings.consumer = "worker-1";
    if (GetParam()) {
      settings.group = std::make_shared<redis::GroupCommit>(proxy_->endpoint(), settings.connection,
                                                            real_clock_);
    }
    proxied_ =
        std::make_unique<invocation::RedisLifecycleStore>(settings, proxy_->endpoint(), clock_);
    ASSERT_TRUE(proxied_->acknowledge("0-1").ok());  // its connection, through the proxy
  }
  /// Reads the next message as worker-1 and processes it through the proxy.
  invocation::Delivery deliver(const std::string& id) {
    (void)redis_->command({"XREADGROUP", "GROUP", "relay", "worker-1", "STREAMS", "events", ">"});
    return lifecycle_->process(*proxied_, entryOf(id), stopping_);
  }

  std::unique_ptr<relay::testing::ReplyDroppingProxy> proxy_;
  std::unique_ptr<invocation::RedisLifecycleStore> proxied_;
  std::atomic<bool> stopping_{false};
};

TEST_P(LostReply, AClaimWhoseReplyWasLostRunsTheHandlerOnceAsAttemptOne) {
  const std::string id = xadd(R"({"kind":"order"})");
  proxy_->dropNextReply();  // the reply to the claim
  EXPECT_EQ(deliver(id), invocation::Delivery::kAcked);
  EXPECT_EQ(proxy_->dropped(), 1);
  ASSERT_EQ(runtime_.runsOf("shop/bin/a.sh"), 1);
  EXPECT_EQ(runtime_.runs()[0].attempt, 1);
  EXPECT_EQ(marker(id, "shop/bin/a.sh").substr(0, 12), "succeeded:1:");
  EXPECT_TRUE(dlqEntries().empty());
}

TEST_P(LostReply, AnOutcomeWhoseReplyWasLostIsRecordedOnceAndNeverRunAgain) {
  runtime_.block("shop/bin/a.sh");
  const std::string id = xadd(R"({"kind":"order"})");
  std::thread worker([&] { EXPECT_EQ(deliver(id), invocation::Delivery::kAcked); });
  ASSERT_TRUE(runtime_.waitRunning(1));
  proxy_->dropNextReply();  // the reply to the outcome
  runtime_.unblock("shop/bin/a.sh");
  worker.join();
  EXPECT_EQ(proxy_->dropped(), 1);
  EXPECT_EQ(runtime_.runsOf("shop/bin/a.sh"), 1);
  EXPECT_EQ(pendingCount(), 0);
  EXPECT_TRUE(dlqEntries().empty());  // a success never ends in the DLQ for a lost reply
  EXPECT_EQ(*redis_->command({"HGET", "relay:events:stats", "shop/bin/a.sh:succeeded"})->string(),
            "1");  // counted once
}

TEST_P(LostReply, ALostLastFailureWritesOneDlqEntry) {
  runtime_.failAlways("shop/bin/a.sh", "exit 3");
  runtime_.block("shop/bin/a.sh");
  const std::string id = xadd(R"({"kind":"order"})");
  std::thread worker([&] { deliver(id); });
  ASSERT_TRUE(runtime_.waitRunning(1));
  proxy_->dropNextReply();
  runtime_.unblock("shop/bin/a.sh");
  worker.join();
  EXPECT_EQ(dlqEntries().size(), 1u);
  EXPECT_EQ(pendingCount(), 0);
}

TEST_P(LostReply, ABlipLongerThanTheRetriesNeverDeadLettersAnInvocationThatNeverRan) {
  const std::string id = xadd(R"({"kind":"order"})");
  proxy_->dropNextReply();
  proxy_->setRefusing(true);  // Redis unreachable from this worker for a while
  EXPECT_EQ(deliver(id), invocation::Delivery::kPending);
  EXPECT_EQ(runtime_.runsOf("shop/bin/a.sh"), 0);
  EXPECT_EQ(marker(id, "shop/bin/a.sh").substr(0, 10), "claimed:1:");  // claimed, never started
  proxy_->setRefusing(false);
  EXPECT_EQ(renewer_->owed(), 1u);
  renewer_->renewAll();  // the owed release
  EXPECT_EQ(renewer_->owed(), 0u);
  EXPECT_EQ(marker(id, "shop/bin/a.sh").substr(0, 9), "failed:0:");  // given back: not charged
  reclaim();
  EXPECT_EQ(runtime_.runsOf("shop/bin/a.sh"), 1);
  EXPECT_EQ(runtime_.runs()[0].attempt, 1);
  EXPECT_TRUE(dlqEntries().empty());
  EXPECT_EQ(pendingCount(), 0);
}

INSTANTIATE_TEST_SUITE_P(Store, LostReply, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& param) {
                           return param.param ? "ThroughAGroupCommit" : "Alone";
                         });

}  // namespace
}  // namespace relay::stream::testing
