#include "schedule/posix_tz.h"

#include <date/tz.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "unit/schedule/time_text.h"

namespace relay::schedule {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

date::sys_seconds utc(std::string_view rfc3339) {
  return date::floor<seconds>(testing::at(rfc3339));
}

PosixTz parsedTz(std::string_view text) {
  auto tz = PosixTz::parse(text);
  EXPECT_TRUE(tz.ok()) << text << ": " << (tz.ok() ? "" : tz.error().message);
  return tz.ok() ? tz.value() : PosixTz::parse("UTC0").value();
}

TEST(PosixTz, ConstantOffsetsHaveNoDst) {
  const PosixTz kathmandu = parsedTz("<+0545>-5:45");
  EXPECT_FALSE(kathmandu.hasDst());
  EXPECT_EQ(kathmandu.offsetAt(utc("2050-06-01T00:00:00Z")), hours(5) + minutes(45));
  EXPECT_EQ(parsedTz("UTC0").offsetAt(utc("2050-06-01T00:00:00Z")), seconds(0));
  EXPECT_EQ(parsedTz("<-03>3").offsetAt(utc("2050-06-01T00:00:00Z")), hours(-3));
}

TEST(PosixTz, NorthernRuleSwitchesAtTheStatedWallTimes) {
  const PosixTz berlin = parsedTz("CET-1CEST,M3.5.0,M10.5.0/3");
  EXPECT_TRUE(berlin.hasDst());
  // 2040: last Sundays are 25 March and 28 October.
  EXPECT_EQ(berlin.offsetAt(utc("2040-03-25T00:59:59Z")), hours(1));
  EXPECT_EQ(berlin.offsetAt(utc("2040-03-25T01:00:00Z")), hours(2));
  EXPECT_EQ(berlin.offsetAt(utc("2040-10-28T00:59:59Z")), hours(2));
  EXPECT_EQ(berlin.offsetAt(utc("2040-10-28T01:00:00Z")), hours(1));
}

TEST(PosixTz, SouthernRuleWrapsTheYear) {
  const PosixTz lord_howe = parsedTz("<+1030>-10:30<+11>-11,M10.1.0,M4.1.0");
  EXPECT_EQ(lord_howe.offsetAt(utc("2040-01-01T00:00:00Z")), hours(11));
  EXPECT_EQ(lord_howe.offsetAt(utc("2040-06-01T00:00:00Z")), hours(10) + minutes(30));
  EXPECT_EQ(lord_howe.offsetAt(utc("2040-12-31T23:00:00Z")), hours(11));
  // 2040-10-07 (first Sunday) 02:00 at +10:30 is 2040-10-06T15:30Z.
  EXPECT_EQ(lord_howe.offsetAt(utc("2040-10-06T15:29:59Z")), hours(10) + minutes(30));
  EXPECT_EQ(lord_howe.offsetAt(utc("2040-10-06T15:30:00Z")), hours(11));
}

TEST(PosixTz, AcceptsNegativeAndExtendedTransitionHours) {
  // America/Nuuk: DST starts at -01:00 on the last Sunday of March (Saturday 23:00).
  const PosixTz nuuk = parsedTz("<-02>2<-01>,M3.5.0/-1,M10.5.0/0");
  // 2040-03-25 00:00 at -02 minus one hour = 2040-03-25T01:00Z.
  EXPECT_EQ(nuuk.offsetAt(utc("2040-03-25T00:59:59Z")), hours(-2));
  EXPECT_EQ(nuuk.offsetAt(utc("2040-03-25T01:00:00Z")), hours(-1));
  // Asia/Gaza switches at hour 50 of the fourth Thursday.
  const PosixTz gaza = parsedTz("EET-2EEST,M3.4.4/50,M10.4.4/50");
  // 2040-03-22 is the fourth Thursday; +50 h = 2040-03-24 02:00 at +2 = 00:00Z.
  EXPECT_EQ(gaza.offsetAt(utc("2040-03-23T23:59:59Z")), hours(2));
  EXPECT_EQ(gaza.offsetAt(utc("2040-03-24T00:00:00Z")), hours(3));
}

TEST(PosixTz, JulianAndZeroBasedDays) {
  // J60 is 1 March even in a leap year; 59 (zero-based) is 29 February in one.
  const PosixTz julian = parsedTz("AAA0BBB,J60/0,J300/0");
  EXPECT_EQ(julian.offsetAt(utc("2040-02-29T23:59:59Z")), seconds(0));
  EXPECT_EQ(julian.offsetAt(utc("2040-03-01T00:00:00Z")), hours(1));
  const PosixTz zero_based = parsedTz("AAA0BBB,59/0,300/0");
  EXPECT_EQ(zero_based.offsetAt(utc("2040-02-28T23:59:59Z")), seconds(0));
  EXPECT_EQ(zero_based.offsetAt(utc("2040-02-29T00:00:00Z")), hours(1));
}

TEST(PosixTz, DstAllYearRuleStaysInDst) {
  const PosixTz always = parsedTz("EST5EDT,0/0,J365/25");
  for (const char* t : {"2040-01-01T04:30:00Z", "2040-01-01T05:00:00Z", "2040-06-01T00:00:00Z",
                        "2040-12-31T23:59:59Z", "2041-01-01T05:00:00Z"}) {
    EXPECT_EQ(always.offsetAt(utc(t)), hours(-4)) << t;
  }
}

TEST(PosixTz, NegativeDstIsAllowed) {
  const PosixTz dublin = parsedTz("IST-1GMT0,M10.5.0,M3.5.0/1");
  EXPECT_EQ(dublin.offsetAt(utc("2040-01-15T00:00:00Z")), seconds(0));
  EXPECT_EQ(dublin.offsetAt(utc("2040-07-15T00:00:00Z")), hours(1));
}

TEST(PosixTz, RejectsMalformedRules) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "a zone name of at least 3 letters at position 1"},
      {"AB1", "a zone name of at least 3 letters at position 1"},
      {"CET", "hours (0-24) at position 4"},
      {"CET25", "hours (0-24) at position 4"},
      {"<+05", "'>' closing a quoted zone name at position 5"},
      {"CET-1CEST", "',' and a transition rule (Jn, n or Mm.w.d) at position 10"},
      {"CET-1CEST,M13.5.0,M10.5.0", "a month (0-12) at position 12"},
      {"CET-1CEST,M0.5.0,M10.5.0", "a month 1-12 at position 13"},
      {"CET-1CEST,M3.6.0,M10.5.0", "a week (0-5) at position 14"},
      {"CET-1CEST,M3.5.7,M10.5.0", "a weekday (0-6) at position 16"},
      {"CET-1CEST,J0,M10.5.0", "a Julian day 1-365 at position 13"},
      {"CET-1CEST,M3.5.0", "',' and a transition rule (Jn, n or Mm.w.d) at position 17"},
      {"CET-1CEST,M3.5.0,M10.5.0/168", "hours (0-167) at position 26"},
      {"CET-1CEST,M3.5.0,M10.5.0x", "the end of the rule at position 25"},
      {"CET-1:60", "minutes 00-59 (0-59) at position 7"},
  };
  for (const auto& [text, expected] : cases) {
    const auto tz = PosixTz::parse(text);
    ASSERT_FALSE(tz.ok()) << text;
    EXPECT_EQ(tz.error().message, "TZ rule \"" + std::string(text) + "\": expected " + expected)
        << text;
  }
}

/// The last line of a TZif file: its POSIX TZ rule.
std::string footerOf(const std::string& zone) {
  std::ifstream file("/usr/share/zoneinfo/" + zone, std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
  if (bytes.size() < 2 || bytes.back() != '\n') return "";
  const std::size_t start = bytes.rfind('\n', bytes.size() - 2);
  return start == std::string::npos ? "" : bytes.substr(start + 1, bytes.size() - start - 2);
}

TEST(PosixTz, AgreesWithEveryZoneTableWhereBothApply) {
  // A footer rule describes the zone after its table ends, and a table generated from that
  // rule (Debian's runs to 2037) must show the same switches: compare both sides of every
  // transition in the table's last three years, and the offset the table ends with.
  std::size_t zones_checked = 0;
  for (const date::time_zone& zone : date::get_tzdb().zones) {
    const std::string footer = footerOf(zone.name());
    auto tz = PosixTz::parse(footer);
    ASSERT_TRUE(tz.ok()) << zone.name() << ": " << tz.error().message;
    const date::sys_info last = zone.get_info(date::sys_days{date::year{9999} / 1 / 1});
    EXPECT_EQ(tz->offsetAt(last.begin), last.offset) << zone.name() << " [" << footer << "]";
    // Tables that reach past 2037 (Gaza, Casablanca) list switches the rule cannot express
    // (Ramadan); their rule only starts where the table ends.
    const bool table_generated_from_rule = last.begin < date::sys_days{date::year{2038} / 1 / 1};
    if (tz->hasDst() && table_generated_from_rule) {
      for (date::sys_seconds t = last.begin - hours(24 * 365 * 3); t < last.begin;) {
        const date::sys_info info = zone.get_info(t);
        ASSERT_EQ(tz->offsetAt(t), info.offset)
            << zone.name() << " [" << footer << "] at " << date::format("%F %T", t);
        ASSERT_EQ(tz->offsetAt(info.end - seconds(1)), info.offset)
            << zone.name() << " [" << footer << "] before " << date::format("%F %T", info.end);
        t = info.end;
      }
    }
    ++zones_checked;
  }
  EXPECT_GT(zones_checked, 300U);
}

}  // namespace
}  // namespace relay::schedule
