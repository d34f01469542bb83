#include "common/result.h"

#include <gtest/gtest.h>

#include <memory>

namespace relay {
namespace {

Result<int> half(int n) {
  if (n % 2 != 0) return Error::invalid(std::to_string(n) + " is odd");
  return n / 2;
}

TEST(Result, CarriesAValueOrAnError) {
  const auto ok = half(8);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 4);
  const auto bad = half(3);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_EQ(bad.error().message, "3 is odd");
}

TEST(Result, HoldsMoveOnlyValues) {
  Result<std::unique_ptr<int>> owned = std::make_unique<int>(7);
  ASSERT_TRUE(owned);
  std::unique_ptr<int> taken = std::move(owned).value();
  EXPECT_EQ(*taken, 7);
}

TEST(Result, VoidResultIsSuccessUntilGivenAnError) {
  Status fine;
  EXPECT_TRUE(fine.ok());
  Status failed = Error::unavailable("redis down");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().kind, ErrorKind::kUnavailable);
  EXPECT_STREQ(errorKindName(failed.error().kind), "unavailable");
}

}  // namespace
}  // namespace relay
