#include "invocation/concurrency_limiter.h"

#include <gtest/gtest.h>

#include <thread>

namespace relay::invocation {
namespace {

using std::chrono::milliseconds;

TEST(ConcurrencyLimiter, WorkerWideCapHoldsAcrossApps) {
  ConcurrencyLimiter limiter(2);
  auto a = limiter.acquire("a", 4, milliseconds(0));
  auto b = limiter.acquire("b", 4, milliseconds(0));
  ASSERT_TRUE(a && b);
  EXPECT_FALSE(limiter.acquire("c", 4, milliseconds(0)));
  EXPECT_EQ(limiter.inUse(), 2);
}

TEST(ConcurrencyLimiter, PerAppCapIsTheSmallerOfTheAppsAndTheWorkers) {
  ConcurrencyLimiter limiter(8);
  auto first = limiter.acquire("a", 1, milliseconds(0));
  ASSERT_TRUE(first);
  EXPECT_FALSE(limiter.acquire("a", 1, milliseconds(0)));
  EXPECT_TRUE(limiter.acquire("b", 1, milliseconds(0)));
  ConcurrencyLimiter small(1);
  auto only = small.acquire("a", 4, milliseconds(0));
  EXPECT_FALSE(small.acquire("a", 4, milliseconds(0)));
}

TEST(ConcurrencyLimiter, ReleasedSlotIsReusedAndAWaiterGetsIt) {
  ConcurrencyLimiter limiter(1);
  std::optional<ConcurrencyLimiter::Slot> held = limiter.acquire("a", 1, milliseconds(0));
  ASSERT_TRUE(held);
  bool waited = false;
  std::thread waiter(
      [&] { waited = limiter.acquire("a", 1, std::chrono::seconds(10)).has_value(); });
  held.reset();
  waiter.join();
  EXPECT_TRUE(waited);
  EXPECT_EQ(limiter.inUse(), 0);  // the waiter's slot went back when it was dropped
  EXPECT_TRUE(limiter.acquire("a", 1, milliseconds(0)));
}

}  // namespace
}  // namespace relay::invocation
