#include "fakes/fake_clock.h"

#include <gtest/gtest.h>

namespace relay::testing {
namespace {

TEST(FakeClock, SleepAdvancesBothClocksWithoutBlocking) {
  FakeClock clock;
  const WallTime wall = clock.now();
  const MonoTime mono = clock.monotonicNow();
  clock.sleepFor(std::chrono::minutes(10));
  EXPECT_EQ(clock.now() - wall, std::chrono::minutes(10));
  EXPECT_EQ(clock.monotonicNow() - mono, std::chrono::minutes(10));
  EXPECT_EQ(clock.slept(), std::chrono::minutes(10));
}

TEST(FakeClock, SetWallMovesOnlyWallTime) {
  FakeClock clock;
  const MonoTime mono = clock.monotonicNow();
  clock.setWall(WallTime(std::chrono::seconds(0)));
  EXPECT_EQ(clock.now().time_since_epoch().count(), 0);
  EXPECT_EQ(clock.monotonicNow(), mono);
}

}  // namespace
}  // namespace relay::testing
