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

}  // namespace
}  // namespace relay
