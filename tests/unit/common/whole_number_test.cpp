#include "common/whole_number.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace relay {
namespace {

TEST(WholeNumber, ReadsTheWholeText) {
  long long value = -1;
  EXPECT_TRUE(parseWholeNumber("1712", value));
  EXPECT_EQ(value, 1712);
  EXPECT_TRUE(parseWholeNumber("-3", value));
  EXPECT_EQ(value, -3);
}

TEST(WholeNumber, RefusesPartialSignedEmptyAndOutOfRangeTextAndKeepsTheOldValue) {
  int value = 7;
  for (const char* text : {"", " 1", "1 ", "12a", "+1", "0x10", "1.5", "99999999999"}) {
    EXPECT_FALSE(parseWholeNumber(text, value)) << '"' << text << '"';
    EXPECT_EQ(value, 7) << '"' << text << '"';
  }
  std::uint32_t unsigned_value = 7;
  EXPECT_FALSE(parseWholeNumber("-1", unsigned_value));
  EXPECT_EQ(unsigned_value, 7u);
}

TEST(WholeNumber, ReadsOtherBasesWithoutAPrefix) {
  std::size_t value = 0;
  EXPECT_TRUE(parseWholeNumber("1aF", value, 16));
  EXPECT_EQ(value, 0x1af);
  EXPECT_FALSE(parseWholeNumber("0x1a", value, 16));
  EXPECT_FALSE(parseWholeNumber("18", value, 8));
  EXPECT_EQ(value, 0x1af);
}

TEST(LeadingWholeNumber, ReadsTheNumberTheTextStartsWith) {
  EXPECT_EQ(leadingWholeNumber<long long>("5"), 5);
  EXPECT_EQ(leadingWholeNumber<long long>("5 attempts"), 5);
  EXPECT_EQ(leadingWholeNumber<long long>("-2x"), -2);
}

TEST(LeadingWholeNumber, FallsBackWhenTheTextStartsWithNoNumber) {
  EXPECT_EQ(leadingWholeNumber<long long>(""), 0);
  EXPECT_EQ(leadingWholeNumber<long long>(" 5"), 0);
  EXPECT_EQ(leadingWholeNumber<long long>("x5", -1), -1);
  EXPECT_EQ(leadingWholeNumber<int>("99999999999", 7), 7);
}

}  // namespace
}  // namespace relay
