#include "common/stop_signal.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "common/system_clock.h"
#include "fakes/fake_clock.h"

namespace relay {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;

// The real clock, counting how often a wait or a sleep returned to its caller.
class CountingClock final : public Clock {
 public:
  WallTime now() const override { return real_.now(); }
  MonoTime monotonicNow() const override { return real_.monotonicNow(); }
  void sleepFor(std::chrono::nanoseconds duration) override {
    ++waits;
    real_.sleepFor(duration);
  }
  void waitUntil(std::condition_variable& changed, std::unique_lock<std::mutex>& lock,
                 MonoTime deadline) override {
    ++waits;
    real_.waitUntil(changed, lock, deadline);
  }
  std::atomic<int> waits{0};

 private:
  SystemClock real_;
};

TEST(StopSignal, ARequestFromAnotherThreadEndsAnHourLongWait) {
  SystemClock clock;
  StopSignal stop;
  std::thread requester([&] { stop.request(); });
  EXPECT_TRUE(stop.sleepFor(clock, hours(1)));  // never returns if the request is missed
  requester.join();
  EXPECT_TRUE(stop.requested());
  EXPECT_TRUE(stop.flag().load());
}

TEST(StopSignal, AnIdleWaitOnTheRealClockWakesOnceNotEveryPollInterval) {
  CountingClock clock;
  StopSignal stop;
  const MonoTime start = clock.monotonicNow();
  EXPECT_FALSE(stop.sleepFor(clock, milliseconds(350)));
  EXPECT_GE(clock.monotonicNow() - start, milliseconds(350));
  // One wait to the deadline (a spurious wake-up may add one); sleeping in 100 ms steps to
  // poll the flag, with sleepFor() or with Clock's default waitUntil(), takes four.
  EXPECT_LE(clock.waits.load(), 2);
}

TEST(StopSignal, ANudgeEndsTheWaitOnlyWhenItsWakeFlagIsSet) {
  SystemClock clock;
  StopSignal stop;
  std::atomic<bool> wake{false};
  std::thread nudger([&] { stop.nudge(); });  // no flag set: the wait goes on to its deadline
  const MonoTime start = clock.monotonicNow();
  EXPECT_FALSE(stop.sleepFor(clock, milliseconds(100), &wake));
  EXPECT_GE(clock.monotonicNow() - start, milliseconds(100));
  nudger.join();

  std::thread waker([&] {
    wake = true;
    stop.nudge();
  });
  EXPECT_TRUE(stop.sleepFor(clock, hours(1), &wake));
  waker.join();
  EXPECT_FALSE(stop.requested());
}

TEST(StopSignal, AFakeClockIsAdvancedToTheDeadlineInsteadOfWaitedFor) {
  testing::FakeClock clock;
  StopSignal stop;
  const MonoTime start = clock.monotonicNow();
  EXPECT_FALSE(stop.sleepFor(clock, hours(1)));
  EXPECT_EQ(clock.monotonicNow() - start, hours(1));
}

TEST(StopSignal, AnEarlierRequestReturnsAtOnceWithoutMovingTheClock) {
  testing::FakeClock clock;
  StopSignal stop;
  stop.request();
  const MonoTime start = clock.monotonicNow();
  EXPECT_TRUE(stop.sleepFor(clock, hours(1)));
  EXPECT_EQ(clock.monotonicNow(), start);
}

}  // namespace
}  // namespace relay
