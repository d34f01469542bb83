// The reader under a backlog and at a low rate (docs/pipeline.md "Reading"), against a real
// redis-server.
#include <gtest/gtest.h>

#include <algorithm>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "integration/stream/pipeline_fixture.h"
#include "support/spawned_process.h"

namespace relay::stream::testing {
namespace {

using std::chrono::milliseconds;

constexpr const char* kReadingApp = R"(runtime: exec
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
    writeApp("alpha", kReadingApp, {"bin/a.sh"});
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

  /// The commands in the slow log, oldest first, each with at least 6 arguments (with
  /// slowlog-log-slower-than 0 every command that ran; a blocking read that timed out is not).
  std::vector<std::vector<std::string>> slowLog() {
    auto log = redis_->command({"SLOWLOG", "GET", "100000"});
    std::vector<std::vector<std::string>> out;
    if (!log.ok()) return out;
    const auto entries = log->elements();
    if (!entries.ok()) return out;
    for (const redis::ReplyView entry : *entries) {
      const auto command = entry.at(3);
      if (!command.ok() || command->size() < 6) continue;
      std::vector<std::string> args;
      for (std::size_t i = 0; i < command->size(); ++i) {
        args.emplace_back(*command->at(i)->string());
      }
      out.push_back(std::move(args));
    }
    std::reverse(out.begin(), out.end());
    return out;
  }

  std::thread worker_;
};

// docs/pipeline.md "Reading": with MAX_CONCURRENCY messages running, the reader queues what it
// reads and reads on up to the in-hand limit, and no more than MAX_CONCURRENCY run at once.
TEST_F(Reading, TheReaderReadsOnWhileEveryWorkerRunsAndNoMoreRunThanTheCap) {
  build(/*max_concurrency=*/2);  // in hand: at most 16
  runtime_.block(kHandler);
  for (int i = 0; i < 6; ++i) xadd(R"({"kind":"order"})");
  start();
  ASSERT_TRUE(runtime_.waitRunning(2));
  for (int i = 0; i < 1000 && consumer_->inHand() < 6; ++i) real_clock_.sleepFor(milliseconds(10));
  EXPECT_EQ(consumer_->inHand(), 6);
  EXPECT_EQ(pendingCount(), 6);
  real_clock_.sleepFor(milliseconds(50));  // time enough for a third to start, were it let
  EXPECT_EQ(runtime_.mostRunning(), 2);
  // As they finish, the queued ones run, still two at a time.
  runtime_.allow(kHandler, 4);
  ASSERT_TRUE(runtime_.waitFinished(4));
  ASSERT_TRUE(runtime_.waitRunning(2));
  EXPECT_EQ(runtime_.mostRunning(), 2);
  runtime_.unblock(kHandler);
  ASSERT_TRUE(runtime_.waitFinished(6));
  EXPECT_EQ(runtime_.mostRunning(), 2);
}

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

// docs/pipeline.md "Reading": the reclaimer takes no more than the room in hand either, whatever
// the backlog a dead consumer left (it reserves each page's room before it asks for it).
TEST_F(Reading, TheReclaimerNeverTakesMoreThanTheRoomInHand) {
  consumer_settings_.reclaim_interval = milliseconds(20);
  build(/*max_concurrency=*/4);  // in hand: at most 16
  runtime_.block(kHandler);
  for (int i = 0; i < 40; ++i) xadd(R"({"kind":"order"})");
  // A consumer that read the whole backlog and died.
  ASSERT_TRUE(redis_
                  ->command({"XREADGROUP", "GROUP", "relay", "gone", "COUNT", "40", "STREAMS",
                             "events", ">"})
                  .ok());
  start();
  ASSERT_TRUE(runtime_.waitRunning(4));
  for (int sample = 0; sample < 25; ++sample) {  // ~25 sweeps
    real_clock_.sleepFor(milliseconds(20));
    EXPECT_LE(consumer_->inHand(), 16);
  }
  EXPECT_EQ(consumer_->inHand(), 16);  // full, and no more
}

TEST_F(Reading, AnIdleWorkerStopsAtOnceNotWhenItsBlockingReadEnds) {
  consumer_settings_.block = std::chrono::hours(1);
  build();
  start();
  // Wait until the reader sits in its XREADGROUP BLOCK on an empty stream.
  const auto blocked = [&] {
    const std::string info(*redis_->command({"INFO", "clients"})->string());
    return info.find("blocked_clients:1") != std::string::npos;
  };
  for (int i = 0; i < 1000 && !blocked(); ++i) real_clock_.sleepFor(milliseconds(10));
  ASSERT_TRUE(blocked());
  std::promise<void> stopped;
  std::thread waiter([&] {
    worker_.join();
    stopped.set_value();
  });
  consumer_->stop();
  // Without the interruption run() would return only when the hour-long BLOCK ends.
  const bool returned =
      stopped.get_future().wait_for(std::chrono::seconds(30)) == std::future_status::ready;
  // Failing, end the read from Redis's side so the test does not wait for the hour.
  if (!returned) (void)redis_->command({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"});
  waiter.join();
  EXPECT_TRUE(returned);
  // Stopping is no fault of Redis: nothing counted, nothing reported unhealthy.
  EXPECT_EQ(metrics_.value("relay_redis_errors_total", {{"op", "xreadgroup"}}), 0);
}

TEST_F(Reading, ALoneEventIsReadAtOnceEvenWithFewerSlotsFreeThanABacklogWaitsFor) {
  build();
  runtime_.block(kHandler);
  for (int i = 0; i < 13; ++i) xadd(R"({"kind":"order"})");
  start();
  ASSERT_TRUE(runtime_.waitRunning(13));  // read 10, then 3 of 6: caught up, 3 slots free
  xadd(R"({"kind":"order"})");
  EXPECT_TRUE(runtime_.waitRunning(14));  // not held back to gather 4 slots
}

TEST_F(Reading, AReadThatComesBackShortEndsTheGathering) {
  build();
  runtime_.block(kHandler);
  for (int i = 0; i < 20; ++i) xadd(R"({"kind":"order"})");
  start();
  ASSERT_TRUE(runtime_.waitRunning(16));  // reads of 10 and 6, both full
  runtime_.allow(kHandler, 4);
  ASSERT_TRUE(runtime_.waitFinished(4));
  ASSERT_TRUE(runtime_.waitRunning(16));  // a read of the last 4: full again
  runtime_.allow(kHandler, 4);
  ASSERT_TRUE(runtime_.waitFinished(8));  // the next read of 4 finds nothing: caught up
  xadd(R"({"kind":"order"})");
  xadd(R"({"kind":"order"})");
  ASSERT_TRUE(runtime_.waitRunning(14));
  xadd(R"({"kind":"order"})");
  EXPECT_TRUE(runtime_.waitRunning(15));  // 2 slots free: read at once all the same
}

TEST_F(Reading, ABacklogOfUnmatchedAndMatchedEventsIsSettledWhileTheNextReadIsServed) {
  build();
  std::vector<std::string> matched;
  std::string last;
  for (int i = 0; i < 200; ++i) {
    if (i % 20 == 0) {
      matched.push_back(last = xadd(R"({"kind":"order"})"));
    } else {
      last = xadd(R"({"kind":"other"})");
    }
  }
  start();
  ASSERT_TRUE(runtime_.waitFinished(static_cast<int>(matched.size())));
  // Not the PEL alone: it can be empty for a moment between two reads of the backlog.
  EXPECT_TRUE(waitCaughtUp(last));
  EXPECT_EQ(runtime_.runsOf(kHandler), static_cast<int>(matched.size()));
  for (const std::string& id : matched) {
    EXPECT_EQ(marker(id, kHandler).substr(0, 12), "succeeded:1:") << id;
  }
  EXPECT_LE(reads(), 200 / 4);  // never one message at a time
}

TEST_F(Reading, UnderAnUnmatchedBacklogTheNextReadIsSentBeforeTheAcknowledgements) {
  // Every command goes to the slow log, with its arguments.
  ASSERT_TRUE(redis_->command({"CONFIG", "SET", "slowlog-log-slower-than", "0"}).ok());
  ASSERT_TRUE(redis_->command({"CONFIG", "SET", "slowlog-max-len", "100000"}).ok());
  // Nothing but the reader takes room during the backlog: on the real clock the due poller
  // looks once at the start and the reclaimer never (on the fake one both turn all the time,
  // and a reservation of theirs held when a read comes back leaves no room to read ahead).
  consumer_settings_.min_pending_idle = std::chrono::hours(1);
  consumer_settings_.due_poll = std::chrono::hours(1);
  consumer_settings_.reclaim_interval = std::chrono::hours(1);
  consumer_clock_ = &real_clock_;
  build();
  start();
  // The due poller's look is over and its room given back (it holds up to 10 of the 16 while
  // it looks; the reader's blocking read on the empty stream reserves nothing).
  ASSERT_TRUE(relay::testing::SpawnedProcess::waitUntil(
      [&] {
        const std::vector<std::vector<std::string>> commands = slowLog();
        return consumer_->room() == 16 &&
               std::any_of(commands.begin(), commands.end(), [&](const auto& command) {
                 return command[0].starts_with("EVAL") && command[3] == keys_.due();
               });
      },
      std::chrono::seconds(10)));
  ASSERT_TRUE(redis_->command({"SLOWLOG", "RESET"}).ok());
  // The backlog arrives at once, as a whole.
  ASSERT_TRUE(redis_->command({"MULTI"}).ok());
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(redis_->command({"XADD", "events", "*", "event", R"({"kind":"other"})"}).ok());
  }
  auto added = redis_->command({"EXEC"});
  ASSERT_TRUE(added.ok() && added->size() == 100);
  const std::string last(*added->at(99)->string());
  ASSERT_TRUE(waitCaughtUp(last));
  // Unmatched messages are never in hand for long: every read could ask for 10, unless it was
  // sent ahead (without BLOCK) while the read before it was being acknowledged, for the room
  // beside it (6 beside 10, 10 beside 6).
  std::vector<std::string> ahead, blocking;
  for (const std::vector<std::string>& command : slowLog()) {
    if (command[0] != "XREADGROUP") continue;
    const bool blocks = std::find(command.begin(), command.end(), "BLOCK") != command.end();
    (blocks ? blocking : ahead).push_back(command[5]);
  }
  // After the first full read, every read of the backlog is sent ahead.
  EXPECT_GE(ahead.size(), 5u) << "blocking reads: " << ::testing::PrintToString(blocking);
  EXPECT_NE(std::find(ahead.begin(), ahead.end(), "6"), ahead.end())
      << "reads sent ahead: " << ::testing::PrintToString(ahead);
  for (const std::string& count : ahead) EXPECT_TRUE(count == "6" || count == "10") << count;
}

}  // namespace
}  // namespace relay::stream::testing
