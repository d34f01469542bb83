#include "common/duration.h"

#include <gtest/gtest.h>

namespace relay {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

TEST(Duration, ParsesEverySingleUnit) {
  EXPECT_EQ(parseDuration("500ms").value(), milliseconds(500));
  EXPECT_EQ(parseDuration("90s").value(), seconds(90));
  EXPECT_EQ(parseDuration("5m").value(), minutes(5));
  EXPECT_EQ(parseDuration("24h").value(), hours(24));
  EXPECT_EQ(parseDuration("7d").value(), hours(7 * 24));
}

TEST(Duration, ParsesCompoundForms) {
  EXPECT_EQ(parseDuration("1h30m").value(), minutes(90));
  EXPECT_EQ(parseDuration("1d2h3m4s5ms").value(),
            hours(26) + minutes(3) + seconds(4) + milliseconds(5));
}

TEST(Duration, ZeroAloneIsZero) { EXPECT_EQ(parseDuration("0").value(), milliseconds(0)); }

TEST(Duration, RejectsMalformedInput) {
  for (const char* bad : {"", "20", "5 m", " 5m", "5m ", "-1s", "+1s", "1.5h", "1x", "m", "1m1h",
                          "1s1s", "10sec", "1H", "99999999999999999999d"}) {
    const auto parsed = parseDuration(bad);
    ASSERT_FALSE(parsed.ok()) << "accepted \"" << bad << "\"";
    EXPECT_EQ(parsed.error().kind, ErrorKind::kInvalidArgument);
    EXPECT_NE(parsed.error().message.find(bad), std::string::npos) << parsed.error().message;
  }
}

TEST(Duration, ErrorSaysWhatWasExpected) {
  const auto parsed = parseDuration("20");
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.error().message.find("missing unit"), std::string::npos);
  EXPECT_NE(parsed.error().message.find("1h30m"), std::string::npos);
}

TEST(Duration, FormatsLargestUnitsFirst) {
  EXPECT_EQ(formatDuration(minutes(90)), "1h30m");
  EXPECT_EQ(formatDuration(seconds(20)), "20s");
  EXPECT_EQ(formatDuration(milliseconds(250)), "250ms");
  EXPECT_EQ(formatDuration(milliseconds(0)), "0s");
  EXPECT_EQ(formatDuration(hours(24 * 7)), "7d");
}

TEST(Duration, FormatRoundTripsThroughParse) {
  for (const char* text : {"1d1h1m1s1ms", "10m", "2h5s", "999ms"}) {
    EXPECT_EQ(formatDuration(parseDuration(text).value()), text);
  }
}

}  // namespace
}  // namespace relay
