#include "schedule/time_zone.h"

#include <gtest/gtest.h>

#include "unit/schedule/time_text.h"

namespace relay::schedule {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using testing::at;

date::sys_seconds utcAt(std::string_view rfc3339) {
  return date::floor<std::chrono::seconds>(at(rfc3339));
}

date::local_seconds wall(int y, unsigned mo, unsigned d, int h, int mi) {
  return date::local_days{date::year{y} / mo / d} + hours(h) + minutes(mi);
}

TimeZone load(std::string_view name) {
  auto zone = TimeZone::load(name);
  EXPECT_TRUE(zone.ok()) << name << ": " << (zone.ok() ? "" : zone.error().message);
  return zone.ok() ? zone.value() : TimeZone::load("UTC").value();
}

TEST(TimeZone, LoadsIanaNamesAndKeepsThem) {
  EXPECT_EQ(load("UTC").name(), "UTC");
  EXPECT_EQ(load("Europe/Berlin").name(), "Europe/Berlin");
  EXPECT_EQ(load("America/Argentina/Buenos_Aires").name(), "America/Argentina/Buenos_Aires");
  EXPECT_EQ(load("US/Eastern").name(), "US/Eastern");  // a backward-compatible link
}

TEST(TimeZone, RejectsUnknownNames) {
  for (const char* name : {"Mars/Olympus_Mons", "", "europe/berlin", "Europe", "../etc/passwd",
                           "posix/Europe/Berlin", "right/UTC", "zone.tab", "Europe/Berlin "}) {
    const auto zone = TimeZone::load(name);
    ASSERT_FALSE(zone.ok()) << name;
    EXPECT_EQ(zone.error().kind, ErrorKind::kInvalidArgument);
    EXPECT_EQ(zone.error().message, "unknown timezone \"" + std::string(name) + "\"");
  }
}

TEST(TimeZone, RejectsTheHostDependentLocaltime) {
  const auto zone = TimeZone::load("localtime");
  ASSERT_FALSE(zone.ok());
  EXPECT_EQ(zone.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_NE(zone.error().message.find("depends on the host"), std::string::npos);
}

TEST(TimeZone, CopiesShareTheZone) {
  const TimeZone berlin = load("Europe/Berlin");
  const TimeZone copy = berlin;  // NOLINT(performance-unnecessary-copy-initialization)
  EXPECT_EQ(copy.name(), "Europe/Berlin");
  EXPECT_EQ(copy.offsetAt(utcAt("2024-07-01T00:00:00Z")), hours(2));
}

TEST(TimeZone, ReportsOffsetsIncludingFractionalHours) {
  EXPECT_EQ(load("UTC").offsetAt(utcAt("2024-07-01T00:00:00Z")), hours(0));
  EXPECT_EQ(load("Europe/Berlin").offsetAt(utcAt("2024-01-15T00:00:00Z")), hours(1));
  EXPECT_EQ(load("Europe/Berlin").offsetAt(utcAt("2024-07-15T00:00:00Z")), hours(2));
  EXPECT_EQ(load("America/New_York").offsetAt(utcAt("2024-01-15T00:00:00Z")), hours(-5));
  EXPECT_EQ(load("Asia/Kathmandu").offsetAt(utcAt("2024-01-15T00:00:00Z")), hours(5) + minutes(45));
  EXPECT_EQ(load("Australia/Lord_Howe").offsetAt(utcAt("2024-01-15T00:00:00Z")), hours(11));
  EXPECT_EQ(load("Australia/Lord_Howe").offsetAt(utcAt("2024-07-15T00:00:00Z")),
            hours(10) + minutes(30));
}

TEST(TimeZone, SwitchesAtTheExactTransitionInstant) {
  const TimeZone berlin = load("Europe/Berlin");
  EXPECT_EQ(berlin.offsetAt(utcAt("2024-03-31T00:59:59Z")), hours(1));
  EXPECT_EQ(berlin.offsetAt(utcAt("2024-03-31T01:00:00Z")), hours(2));
  EXPECT_EQ(berlin.offsetAt(utcAt("2024-10-27T00:59:59Z")), hours(2));
  EXPECT_EQ(berlin.offsetAt(utcAt("2024-10-27T01:00:00Z")), hours(1));
}

TEST(TimeZone, ConvertsInstantsToWallClockTime) {
  EXPECT_EQ(load("Asia/Kathmandu").toLocal(utcAt("2024-05-15T03:15:00Z")), wall(2024, 5, 15, 9, 0));
  EXPECT_EQ(load("America/New_York").toLocal(utcAt("2024-11-03T05:30:00Z")),
            wall(2024, 11, 3, 1, 30));
  EXPECT_EQ(load("America/New_York").toLocal(utcAt("2024-11-03T06:30:00Z")),
            wall(2024, 11, 3, 1, 30));
}

TEST(TimeZone, FindsNoInstantForAWallTimeInAGap) {
  EXPECT_EQ(load("Europe/Berlin").firstInstantOf(wall(2024, 3, 31, 2, 30)), std::nullopt);
  EXPECT_EQ(load("America/New_York").firstInstantOf(wall(2024, 3, 10, 2, 0)), std::nullopt);
  EXPECT_EQ(load("Australia/Lord_Howe").firstInstantOf(wall(2024, 10, 6, 2, 29)), std::nullopt);
  EXPECT_EQ(load("Asia/Kathmandu").firstInstantOf(wall(1986, 1, 1, 0, 14)), std::nullopt);
}

TEST(TimeZone, FindsTheFirstInstantOfARepeatedWallTime) {
  EXPECT_EQ(load("Europe/Berlin").firstInstantOf(wall(2024, 10, 27, 2, 30)),
            utcAt("2024-10-27T00:30:00Z"));
  EXPECT_EQ(load("America/New_York").firstInstantOf(wall(2024, 11, 3, 1, 0)),
            utcAt("2024-11-03T05:00:00Z"));
  EXPECT_EQ(load("Australia/Lord_Howe").firstInstantOf(wall(2024, 4, 7, 1, 45)),
            utcAt("2024-04-06T14:45:00Z"));
}

TEST(TimeZone, ResolvesOrdinaryWallTimes) {
  EXPECT_EQ(load("Europe/Berlin").firstInstantOf(wall(2024, 3, 31, 3, 0)),
            utcAt("2024-03-31T01:00:00Z"));
  EXPECT_EQ(load("Europe/Berlin").firstInstantOf(wall(2024, 10, 27, 3, 0)),
            utcAt("2024-10-27T02:00:00Z"));
  EXPECT_EQ(load("UTC").firstInstantOf(wall(2024, 2, 29, 23, 59)), utcAt("2024-02-29T23:59:00Z"));
}

TEST(TimeZone, KeepsObservingDaylightSavingAfter2037) {
  // Debian's zone tables end in 2037; later years follow the TZ rule at the end of the file.
  const TimeZone berlin = load("Europe/Berlin");
  EXPECT_EQ(berlin.offsetAt(utcAt("2040-07-01T00:00:00Z")), hours(2));
  EXPECT_EQ(berlin.offsetAt(utcAt("2040-12-01T00:00:00Z")), hours(1));
  EXPECT_EQ(berlin.offsetAt(utcAt("2040-03-25T00:59:59Z")), hours(1));
  EXPECT_EQ(berlin.offsetAt(utcAt("2040-03-25T01:00:00Z")), hours(2));
  EXPECT_EQ(berlin.firstInstantOf(wall(2040, 3, 25, 2, 30)), std::nullopt);
  EXPECT_EQ(berlin.firstInstantOf(wall(2040, 10, 28, 2, 30)), utcAt("2040-10-28T00:30:00Z"));
  const TimeZone lord_howe = load("Australia/Lord_Howe");
  EXPECT_EQ(lord_howe.offsetAt(utcAt("2100-01-15T00:00:00Z")), hours(11));
  EXPECT_EQ(lord_howe.offsetAt(utcAt("2100-07-15T00:00:00Z")), hours(10) + minutes(30));
  EXPECT_EQ(load("Asia/Kathmandu").offsetAt(utcAt("2100-07-15T00:00:00Z")), hours(5) + minutes(45));
  // Dublin's rule has "negative" DST: winter (GMT) is its daylight-saving period.
  const TimeZone dublin = load("Europe/Dublin");
  EXPECT_EQ(dublin.offsetAt(utcAt("2045-01-15T00:00:00Z")), hours(0));
  EXPECT_EQ(dublin.offsetAt(utcAt("2045-07-15T00:00:00Z")), hours(1));
}

}  // namespace
}  // namespace relay::schedule
