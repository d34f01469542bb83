#include "common/rfc3339.h"

#include <gtest/gtest.h>

namespace relay {
namespace {

std::int64_t secondsOf(std::string_view text) {
  const auto instant = parseRfc3339(text);
  EXPECT_TRUE(instant.has_value()) << text;
  return instant ? instant->seconds : -1;
}

TEST(Rfc3339, ParsesUtcAndOffsetsAsInstants) {
  EXPECT_EQ(secondsOf("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(secondsOf("2026-09-12T10:00:00Z"), 1789207200);
  EXPECT_EQ(secondsOf("2026-09-12T12:00:00+02:00"), 1789207200);
  EXPECT_EQ(secondsOf("2026-09-12T05:30:00-04:30"), 1789207200);
}

TEST(Rfc3339, AcceptsLowercaseSeparatorsAndFractions) {
  EXPECT_EQ(secondsOf("2026-09-12t10:00:00z"), 1789207200);
  const auto fraction = parseRfc3339("2026-09-12T10:00:00.123456789123Z");
  ASSERT_TRUE(fraction);
  EXPECT_EQ(fraction->nanos, 123456789);
  EXPECT_EQ(parseRfc3339("2026-09-12T10:00:00.5Z")->nanos, 500000000);
}

TEST(Rfc3339, OrdersByInstantNotByText) {
  // Lexicographically "11:00+02:00" > "10:00Z", but it is the earlier instant.
  EXPECT_LT(*parseRfc3339("2026-09-12T11:00:00+02:00"), *parseRfc3339("2026-09-12T10:00:00Z"));
  EXPECT_LT(*parseRfc3339("2026-09-12T10:00:00.1Z"), *parseRfc3339("2026-09-12T10:00:00.2Z"));
}

TEST(Rfc3339, HandlesLeapYears) {
  EXPECT_TRUE(parseRfc3339("2024-02-29T00:00:00Z"));
  EXPECT_TRUE(parseRfc3339("2000-02-29T00:00:00Z"));
  EXPECT_FALSE(parseRfc3339("2026-02-29T00:00:00Z"));
  EXPECT_FALSE(parseRfc3339("1900-02-29T00:00:00Z"));
}

TEST(Rfc3339, RejectsEverythingElse) {
  for (const char* bad :
       {"", "2026-09-12", "2026-09-12T10:00:00", "2026-09-12 10:00:00Z", "2026-09-12T10:00Z",
        "2026-09-12T10:00:60Z", "2026-13-01T00:00:00Z", "2026-00-01T00:00:00Z",
        "2026-04-31T00:00:00Z", "2026-09-12T24:00:00Z", "2026-09-12T10:00:00+0200",
        "2026-09-12T10:00:00+24:00", "2026-09-12T10:00:00.Z", "2026-09-12T10:00:00Zjunk",
        "26-09-12T10:00:00Z", "2026-9-12T10:00:00Z", "now()", "１９７０-01-01T00:00:00Z"}) {
    EXPECT_FALSE(parseRfc3339(bad).has_value()) << "accepted \"" << bad << "\"";
  }
}

TEST(Rfc3339, CoversYearZeroToYearNineThousandNineHundredNinetyNine) {
  EXPECT_LT(*parseRfc3339("0000-01-01T00:00:00Z"), *parseRfc3339("1970-01-01T00:00:00Z"));
  EXPECT_GT(*parseRfc3339("9999-12-31T23:59:59Z"), *parseRfc3339("2262-04-12T00:00:00Z"));
}

TEST(Rfc3339, FormatsUtc) {
  const WallTime time{std::chrono::seconds(1789207200) + std::chrono::milliseconds(42)};
  EXPECT_EQ(formatRfc3339(time), "2026-09-12T10:00:00Z");
  EXPECT_EQ(formatRfc3339Millis(time), "2026-09-12T10:00:00.042Z");
  EXPECT_EQ(parseRfc3339(formatRfc3339Millis(time)), Instant::fromWallTime(time));
}

TEST(Rfc3339, FormatsInstantsOfEveryYear) {
  for (const char* text : {"0000-01-01T00:00:00Z", "1969-12-31T23:59:59Z", "2026-01-01T10:00:00Z",
                           "9999-12-31T23:59:59Z"}) {
    EXPECT_EQ(formatInstant(*parseRfc3339(text)), text);
  }
  EXPECT_EQ(formatInstant(*parseRfc3339("2026-01-01T12:00:00.75+02:00")), "2026-01-01T10:00:00Z");
}

}  // namespace
}  // namespace relay
