#include "runtime/prewarm_pool.h"

#include <pthread.h>
#include <signal.h>

#include <future>
#include <memory>

#include <gtest/gtest.h>

#include "common/system_clock.h"
#include "fakes/fake_clock.h"

namespace relay::runtime {
namespace {

using std::chrono::milliseconds;

// What the fake sandboxes share with the test.
struct Census {
  int started = 0;
  int destroyed = 0;
};

class FakeSandbox final : public WarmSandbox {
 public:
  FakeSandbox(Census& census, int serial) : census_(census), serial_(serial) {}
  ~FakeSandbox() override { ++census_.destroyed; }
  bool alive() const override { return alive_; }
  int serial() const { return serial_; }
  void die() { alive_ = false; }

 private:
  Census& census_;
  int serial_;
  bool alive_ = true;
};

class PrewarmPoolTest : public ::testing::Test {
 protected:
  PrewarmPoolTest() {
    settings_.max_per_shape = 4;
    settings_.max_total = 6;
    settings_.window = milliseconds(1000);
    settings_.idle_after = milliseconds(5000);
  }
  std::unique_ptr<PrewarmPool> makePool(milliseconds start_cost = milliseconds(0)) {
    return std::make_unique<PrewarmPool>(
        settings_, clock_,
        [this, start_cost](const InvocationSpec& spec) -> Result<std::unique_ptr<WarmSandbox>> {
          EXPECT_TRUE(spec.input.empty());  // built from the shape only
          EXPECT_TRUE(spec.message_id.empty());
          clock_.advance(start_cost);
          auto sandbox = std::make_unique<FakeSandbox>(census_, ++census_.started);
          made_.push_back(sandbox.get());
          return std::unique_ptr<WarmSandbox>(std::move(sandbox));
        });
  }
  static InvocationSpec spec(const std::string& app, std::uint64_t memory = 256 << 20) {
    InvocationSpec spec;
    spec.app = app;
    spec.app_dir = "/apps/" + app;
    spec.handler = "bin/run";
    spec.resources.memory_bytes = memory;
    spec.message_id = "1-1";
    spec.input = "{}";
    return spec;
  }
  static int serialOf(const std::unique_ptr<WarmSandbox>& sandbox) {
    return static_cast<const FakeSandbox&>(*sandbox).serial();
  }

  PrewarmSettings settings_;
  testing::FakeClock clock_;
  Census census_;
  std::vector<FakeSandbox*> made_;  // owned by the pool or the test
};

TEST_F(PrewarmPoolTest, NothingIsPreparedBeforeTheFirstArrival) {
  auto pool = makePool();
  EXPECT_EQ(pool->maintain(), 0u);
  EXPECT_EQ(census_.started, 0);
  EXPECT_EQ(pool->take(spec("a")), nullptr);  // the first invocation starts cold
}

TEST_F(PrewarmPoolTest, AnArrivalPreparesASandboxThatServesExactlyOneLaterInvocation) {
  auto pool = makePool();
  EXPECT_EQ(pool->take(spec("a")), nullptr);
  EXPECT_EQ(pool->maintain(), 1u);
  EXPECT_EQ(pool->ready("a"), 1u);
  auto first = pool->take(spec("a"));
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(pool->ready("a"), 0u);
  EXPECT_EQ(pool->take(spec("a")), nullptr);  // handed out once, never again
  pool->maintain();
  auto second = pool->take(spec("a"));
  ASSERT_NE(second, nullptr);
  EXPECT_NE(serialOf(first), serialOf(second));
}

TEST_F(PrewarmPoolTest, TheStockFollowsTheArrivalRate) {
  auto pool = makePool(milliseconds(100));  // each start costs 100 ms
  (void)pool->take(spec("a"));
  pool->maintain();                        // learns the start cost
  EXPECT_EQ(pool->target(spec("a")), 1u);  // one arrival a second: 1 + floor(1 x 0.1 s)
  for (int i = 0; i < 20; ++i) (void)pool->take(spec("a"));  // 20 per second
  EXPECT_EQ(pool->target(spec("a")), 3u);                    // ceil(21 x 0.1 / 1) + 1
  for (int i = 0; i < 40; ++i) (void)pool->take(spec("a"));
  EXPECT_EQ(pool->target(spec("a")), 4u);  // capped at max_per_shape
  pool->maintain();
  EXPECT_EQ(pool->ready("a"), 4u);
  clock_.advance(milliseconds(1500));  // the burst leaves the window
  pool->maintain();
  EXPECT_EQ(pool->target(spec("a")), 1u);
  EXPECT_EQ(pool->ready("a"), 1u);  // the surplus was dropped
  EXPECT_EQ(census_.destroyed, census_.started - 1);
}

TEST_F(PrewarmPoolTest, AnIdleShapeScalesToZeroAndThenCostsNothing) {
  auto pool = makePool();
  (void)pool->take(spec("a"));
  pool->maintain();
  ASSERT_EQ(pool->ready("a"), 1u);
  clock_.advance(settings_.idle_after);
  pool->maintain();
  EXPECT_EQ(pool->readyTotal(), 0u);
  EXPECT_EQ(census_.destroyed, census_.started);
  const int started = census_.started;
  clock_.advance(milliseconds(60'000));
  EXPECT_EQ(pool->maintain(), 0u);
  EXPECT_EQ(census_.started, started);
}

TEST_F(PrewarmPoolTest, ASandboxOlderThanTheMaxAgeIsReplaced) {
  settings_.max_age = milliseconds(2000);
  settings_.idle_after = milliseconds(60'000);
  auto pool = makePool();
  (void)pool->take(spec("a"));
  pool->maintain();
  ASSERT_EQ(census_.started, 1);
  clock_.advance(milliseconds(1500));
  pool->maintain();
  EXPECT_EQ(census_.destroyed, 0);
  clock_.advance(milliseconds(600));
  pool->maintain();  // the first aged out: ended, and a fresh one made in the same pass
  EXPECT_EQ(census_.destroyed, 1);
  EXPECT_EQ(census_.started, 2);
  EXPECT_EQ(pool->ready("a"), 1u);
}

TEST_F(PrewarmPoolTest, ForgettingAnAppDropsItsSandboxesOnly) {
  auto pool = makePool();
  (void)pool->take(spec("a"));
  (void)pool->take(spec("b"));
  pool->maintain();
  ASSERT_EQ(pool->ready("a"), 1u);
  ASSERT_EQ(pool->ready("b"), 1u);
  pool->forget("a");  // its template changed
  EXPECT_EQ(pool->ready("a"), 0u);
  EXPECT_EQ(pool->ready("b"), 1u);
  EXPECT_EQ(census_.destroyed, 1);
  EXPECT_EQ(pool->take(spec("a")), nullptr);  // the next one starts from the new template
}

TEST_F(PrewarmPoolTest, ASandboxThatDiedWhileWaitingIsNeverHandedOut) {
  auto pool = makePool();
  (void)pool->take(spec("a"));
  pool->maintain();
  ASSERT_EQ(pool->ready("a"), 1u);
  made_.back()->die();
  EXPECT_EQ(pool->take(spec("a")), nullptr);  // dropped; this invocation starts cold
  EXPECT_EQ(census_.destroyed, 1);
  EXPECT_EQ(pool->ready("a"), 0u);
}

TEST_F(PrewarmPoolTest, ShapesDoNotShareSandboxesAndTheTotalIsBounded) {
  settings_.max_total = 2;
  auto pool = makePool();
  (void)pool->take(spec("a", 64 << 20));
  (void)pool->take(spec("a", 128 << 20));
  (void)pool->take(spec("b"));
  pool->maintain();
  EXPECT_EQ(pool->readyTotal(), 2u);  // three shapes want one each; two fit
  auto small = pool->take(spec("a", 64 << 20));
  auto large = pool->take(spec("a", 128 << 20));
  ASSERT_TRUE(small || large);
  if (small && large) {
    EXPECT_NE(serialOf(small), serialOf(large));
  }
  EXPECT_EQ(pool->ready("a"), 0u);
}

TEST(PrewarmPoolWarmer, RefillsAfterATakeWithoutBeingAsked) {
  SystemClock clock;
  PrewarmSettings settings;
  settings.tick = milliseconds(10);
  Census census;
  std::promise<void> second_start;
  PrewarmPool pool(
      settings, clock, [&](const InvocationSpec&) -> Result<std::unique_ptr<WarmSandbox>> {
        if (++census.started == 1) second_start.set_value();
        return std::unique_ptr<WarmSandbox>(std::make_unique<FakeSandbox>(census, census.started));
      });
  pool.startWarmer();
  InvocationSpec spec;
  spec.app = "a";
  EXPECT_EQ(pool.take(spec), nullptr);
  ASSERT_EQ(second_start.get_future().wait_for(std::chrono::seconds(30)),
            std::future_status::ready);
}

TEST(PrewarmPoolWarmer, ItsThreadsTakeNoSignal) {
  // As under `relay start`: SIGTERM is still deliverable when the runtime (and the pool) is
  // made, and blocked later on every thread but the one that waits for it.
  sigset_t term, previous;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  ASSERT_EQ(::pthread_sigmask(SIG_UNBLOCK, &term, &previous), 0);
  SystemClock clock;
  std::promise<bool> blocked;
  bool answered = false;
  PrewarmPool pool(PrewarmSettings{}, clock,
                   [&](const InvocationSpec&) -> Result<std::unique_ptr<WarmSandbox>> {
                     sigset_t mask;
                     ::pthread_sigmask(SIG_BLOCK, nullptr, &mask);
                     if (!answered) blocked.set_value(sigismember(&mask, SIGTERM) == 1);
                     answered = true;
                     return Error::unavailable("not needed");
                   });
  pool.startWarmer();
  InvocationSpec spec;
  spec.app = "a";
  EXPECT_EQ(pool.take(spec), nullptr);  // wakes the warmer, which calls the starter
  auto future = blocked.get_future();
  ASSERT_EQ(future.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_TRUE(future.get());
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

}  // namespace
}  // namespace relay::runtime
