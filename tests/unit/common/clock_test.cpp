#include "common/clock.h"

#include <gtest/gtest.h>

namespace relay {
namespace {

TEST(UnixMillis, CountsWholeMillisecondsSinceTheEpoch) {
  EXPECT_EQ(unixMillis(WallTime{}), 0);
  // 2026-01-01T10:00:00.123456Z: the microseconds are cut, not rounded.
  const WallTime instant{std::chrono::seconds(1'767'261'600) + std::chrono::microseconds(123'999)};
  EXPECT_EQ(unixMillis(instant), 1'767'261'600'123);
}

TEST(UnixMillis, CountsBackwardsBeforeTheEpoch) {
  EXPECT_EQ(unixMillis(WallTime{std::chrono::milliseconds(-1500)}), -1500);
}

}  // namespace
}  // namespace relay
