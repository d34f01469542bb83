// The worker's cancel watcher against a real redis-server (docs/pipeline.md "Cancellation"):
// an entry of the cancels stream stops the attempt this worker runs under that claim and no
// other; entries written before it started are not replayed; a Redis restart loses none written
// after it, the watcher reconnecting with its backoff; a stop ends its blocked read at once.
#include "worker/cancel_watcher.h"

#include <gtest/gtest.h>

#include <sstream>
#include <thread>

#include "common/system_clock.h"
#include "support/redis_server.h"
#include "support/spawned_process.h"

namespace relay::worker {
namespace {

using relay::testing::SpawnedProcess;
using std::chrono::milliseconds;
using std::chrono::seconds;

class CancelWatcherTest : public relay::testing::RedisTest {
 protected:
  void SetUp() override {
    RedisTest::SetUp();
    redis_ = server().connect();
  }
  std::unique_ptr<CancelWatcher> make() {
    CancelSettings settings;
    settings.block = milliseconds(200);
    settings.backoff = milliseconds(20);
    settings.backoff_cap = milliseconds(200);
    return std::make_unique<CancelWatcher>(settings, server().endpoint(), keys_, running_, metrics_,
                                           logger_, clock_);
  }
  void xadd(const std::string& id, const std::string& field, const std::string& token) {
    ASSERT_TRUE(redis_
                    ->command({"XADD", keys_.cancels(), "*", "id", id, "field", field, "token",
                               token, "cancel", "cli-1-2"})
                    .ok());
  }
  double stops(const std::string& app, const std::string& handler) {
    return metrics_.value("relay_cancellations_total", {{"app", app}, {"handler", handler}});
  }

  SystemClock clock_;
  observability::Metrics metrics_;
  std::ostringstream log_;
  observability::Logger logger_{log_, clock_};
  invocation::StreamKeys keys_{"events", "relay"};
  invocation::RunningAttempts running_;
  std::unique_ptr<redis::Connection> redis_;
};

TEST_F(CancelWatcherTest, StopsTheAttemptOfItsClaimOnlyAndCountsAndLogsIt) {
  auto watcher = make();
  ASSERT_TRUE(watcher->position(*redis_).ok());
  auto mine = running_.add("5-0", "shop/bin/pay.sh", "tok-a");
  auto other = running_.add("5-0", "shop/bin/mail.sh", "tok-b");
  watcher->start();
  xadd("5-0", "shop/bin/pay.sh", "tok-old");  // an earlier attempt's claim: not this one
  xadd("9-0", "shop/bin/pay.sh", "tok-a");    // another message
  xadd("5-0", "shop/bin/pay.sh", "tok-a");
  ASSERT_TRUE(SpawnedProcess::waitUntil([&] { return mine.signal().requested(); }, seconds(5)));
  EXPECT_FALSE(other.signal().requested());
  EXPECT_EQ(stops("shop", "bin/pay.sh"), 1);
  EXPECT_NE(log_.str().find("cancelling a running attempt"), std::string::npos) << log_.str();
  EXPECT_NE(log_.str().find("cli-1-2"), std::string::npos) << log_.str();
}

TEST_F(CancelWatcherTest, EntriesFromBeforeItsStartAreNotReplayed) {
  xadd("5-0", "shop/bin/pay.sh", "tok-a");  // a past cancel of a claim that is reused here
  auto attempt = running_.add("5-0", "shop/bin/pay.sh", "tok-a");
  auto watcher = make();
  watcher->start();
  std::this_thread::sleep_for(milliseconds(500));
  EXPECT_FALSE(attempt.signal().requested());
  xadd("5-0", "shop/bin/pay.sh", "tok-a");
  EXPECT_TRUE(SpawnedProcess::waitUntil([&] { return attempt.signal().requested(); }, seconds(5)));
}

TEST_F(CancelWatcherTest, ARedisRestartLosesNoEntryWrittenAfterIt) {
  auto watcher = make();
  ASSERT_TRUE(watcher->position(*redis_).ok());
  watcher->start();
  auto attempt = running_.add("5-0", "shop/bin/pay.sh", "tok-a");
  ASSERT_TRUE(server().stop().ok());
  std::this_thread::sleep_for(milliseconds(300));  // reads fail; the watcher backs off
  ASSERT_TRUE(server().start().ok());
  redis_ = server().connect();
  xadd("5-0", "shop/bin/pay.sh", "tok-a");
  EXPECT_TRUE(SpawnedProcess::waitUntil([&] { return attempt.signal().requested(); }, seconds(10)))
      << log_.str();
  EXPECT_GE(metrics_.value("relay_redis_errors_total", {{"op", "connect"}}) +
                metrics_.value("relay_redis_errors_total", {{"op", "cancels"}}),
            1);
}

TEST_F(CancelWatcherTest, AStopEndsItsBlockedReadAtOnce) {
  CancelSettings settings;
  settings.block = milliseconds(30'000);
  CancelWatcher watcher(settings, server().endpoint(), keys_, running_, metrics_, logger_, clock_);
  watcher.start();
  std::this_thread::sleep_for(milliseconds(200));  // blocked in XREAD
  const auto begun = std::chrono::steady_clock::now();
  watcher.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - begun, seconds(10));  // not the 30 s block
  EXPECT_EQ(metrics_.value("relay_redis_errors_total", {{"op", "cancels"}}), 0);
}

}  // namespace
}  // namespace relay::worker
