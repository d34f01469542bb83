// The reader under a backlog and at a low rate (docs/pipeline.md "Reading"), against a real
// redis-server.
#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "integration/stream/pipeline_fixture.h"

namespace relay::stream::testing {
namespace {

using std::chrono::milliseconds;

constexpr const char* kApp = R"(runtime: exec
concurrency: 16
events:
  - handler: bin/a.sh
    pattern: {kind: [order]}
    timeout: 20s
)";
constexpr const char* kHandler = "alpha/bin/a.sh";

class Reading : public PipelineTest {
 protected:
  void SetUp() override {
    PipelineTest::SetUp();
    writeApp("alpha", kApp, {"bin/a.sh"});
    // So long that a test that waited for it would fail at its 10 s bounds instead.
    consumer_settings_.gather = std::chrono::hours(1);
  }
  void TearDown() override {
    if (consumer_) consumer_->stop();
    runtime_.unblock(kHandler);
    if (worker_.joinable()) worker_.join();
    PipelineTest::TearDown();
  }

  void start() {
    worker_ = std::thread([this] { consumer_->run(); });
  }

  // XREADGROUP calls Redis has served so far (INFO commandstats).
  long long reads() {
    const std::string info(*redis_->command({"INFO", "commandstats"})->string());
    const std::string name = "cmdstat_xreadgroup:calls=";
    const std::size_t at = info.find(name);
    return at == std::string::npos ? 0 : std::stoll(info.substr(at + name.size()));
  }

  std::thread worker_;
};

TEST_F(Reading, UnderABacklogOneReadBringsSeveralMessagesAndTheInHandLimitHolds) {
  build();  // in hand: at most 16, as many as pool threads
  runtime_.block(kHandler);
  for (int i = 0; i < 40; ++i) xadd(R"({"kind":"order"})");
  start();
  ASSERT_TRUE(runtime_.waitRunning(16));
  EXPECT_EQ(pendingCount(), 16);  // read 10, then 6: the rest of the backlog stays in Redis
  const long long before = reads();
  // Slots free one at a time, as handlers end under a backlog: the reader waits for four
  // instead of reading one message per freed slot.
  for (int finished = 1; finished <= 4; ++finished) {
    runtime_.allow(kHandler, 1);
    ASSERT_TRUE(runtime_.waitFinished(finished));
    real_clock_.sleepFor(milliseconds(20));  // time enough for a read, had one been made
    EXPECT_LE(consumer_->inHand(), 16);
    EXPECT_LE(pendingCount(), 16);
  }
  ASSERT_TRUE(runtime_.waitRunning(16));
  EXPECT_EQ(reads() - before, 1);
  EXPECT_EQ(pendingCount(), 16);
  EXPECT_EQ(consumer_->inHand(), 16);
}

TEST_F(Reading, ALoneEventIsReadAtOnceWithoutWaitingToGather) {
  build();
  runtime_.block(kHandler);
  start();
  xadd(R"({"kind":"order"})");
  ASSERT_TRUE(runtime_.waitRunning(1));
  xadd(R"({"kind":"order"})");
  EXPECT_TRUE(runtime_.waitRunning(2));
}

TEST_F(Reading, AfterTheBacklogIsDrainedALoneEventIsReadAtOnce) {
  build();
  for (int i = 0; i < 30; ++i) xadd(R"({"kind":"order"})");
  start();
  ASSERT_TRUE(runtime_.waitFinished(30));
  runtime_.block(kHandler);
  xadd(R"({"kind":"order"})");
  EXPECT_TRUE(runtime_.waitRunning(1));
}

}  // namespace
}  // namespace relay::stream::testing
