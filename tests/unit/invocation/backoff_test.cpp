#include "invocation/backoff.h"

#include <gtest/gtest.h>

namespace relay::invocation {
namespace {

using std::chrono::minutes;

TEST(Backoff, FollowsTheFixedScheduleAndCapsAtTenMinutes) {
  EXPECT_EQ(retryDelay(1), minutes(1));
  EXPECT_EQ(retryDelay(2), minutes(2));
  EXPECT_EQ(retryDelay(3), minutes(5));
  EXPECT_EQ(retryDelay(4), minutes(10));
  EXPECT_EQ(retryDelay(7), minutes(10));
  EXPECT_EQ(retryDelay(100), minutes(10));
}

TEST(Backoff, ATestTableIsUsedAsGiven) {
  BackoffTable table{{std::chrono::milliseconds(5), std::chrono::milliseconds(7)}};
  EXPECT_EQ(table.after(1), std::chrono::milliseconds(5));
  EXPECT_EQ(table.after(2), std::chrono::milliseconds(7));
  EXPECT_EQ(table.after(9), std::chrono::milliseconds(7));
  EXPECT_EQ(BackoffTable{{}}.after(3), std::chrono::milliseconds(0));
}

}  // namespace
}  // namespace relay::invocation
