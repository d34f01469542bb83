#include "schedule/next_fire.h"

#include <gtest/gtest.h>

#include <set>

#include "schedule/time_zone.h"
#include "unit/schedule/time_text.h"

namespace relay::schedule {
namespace {

using testing::at;
using testing::show;

struct Case {
  const char* cron;
  const char* zone;
  const char* after;
  const char* expected;  // nullptr: no fire time within five years
  const char* why;
};

TimeZone zoneNamed(const char* name) {
  auto zone = TimeZone::load(name);
  EXPECT_TRUE(zone.ok()) << name;
  return zone.ok() ? zone.value() : TimeZone::load("UTC").value();
}

void expectCases(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    const auto cron = CronExpression::parse(c.cron);
    ASSERT_TRUE(cron.ok()) << c.cron << ": " << cron.error().message;
    const auto next = nextFireTime(*cron, zoneNamed(c.zone), at(c.after));
    const std::optional<WallTime> expected =
        c.expected ? std::optional<WallTime>(at(c.expected)) : std::nullopt;
    EXPECT_EQ(show(next), show(expected))
        << "\"" << c.cron << "\" in " << c.zone << " after " << c.after << " (" << c.why << ")";
  }
}

// 2024-05-15 is a Wednesday; 10:07:30Z is mid-minute.
constexpr const char* kWednesday = "2024-05-15T10:07:30Z";

TEST(NextFireTime, CoversEverySyntaxFeature) {
  expectCases({
      {"* * * * *", "UTC", kWednesday, "2024-05-15T10:08:00Z", "next whole minute"},
      {"*/15 * * * *", "UTC", kWednesday, "2024-05-15T10:15:00Z", "step over star"},
      {"5 * * * *", "UTC", kWednesday, "2024-05-15T11:05:00Z", "single value, next hour"},
      {"1-30/5 * * * *", "UTC", kWednesday, "2024-05-15T10:11:00Z", "stepped range"},
      {"5/10 * * * *", "UTC", kWednesday, "2024-05-15T10:15:00Z", "start/step"},
      {"0,30 9-17 * * *", "UTC", kWednesday, "2024-05-15T10:30:00Z", "list and hour range"},
      {"0 */6 * * *", "UTC", kWednesday, "2024-05-15T12:00:00Z", "hour step"},
      {"0 0 * * *", "UTC", kWednesday, "2024-05-16T00:00:00Z", "daily"},
      {"0 12 * * mon-fri", "UTC", kWednesday, "2024-05-15T12:00:00Z", "weekday range"},
      {"0 9 * * sat,SUN", "UTC", kWednesday, "2024-05-18T09:00:00Z", "weekday names"},
      {"0 9 * * 7", "UTC", kWednesday, "2024-05-19T09:00:00Z", "7 is Sunday"},
      {"0 9 * * 0", "UTC", kWednesday, "2024-05-19T09:00:00Z", "0 is Sunday"},
      {"0 6 * * 5-7", "UTC", kWednesday, "2024-05-17T06:00:00Z", "range ending in 7"},
      {"30 4 1,15 * *", "UTC", kWednesday, "2024-06-01T04:30:00Z", "today's slot passed"},
      {"0 0 1 JUN *", "UTC", kWednesday, "2024-06-01T00:00:00Z", "month name"},
      {"0 0 1 jul-sep *", "UTC", kWednesday, "2024-07-01T00:00:00Z", "month name range"},
      {"0 0 1 nov-dec,feb *", "UTC", kWednesday, "2024-11-01T00:00:00Z", "month list"},
      {"0 0 1 jan *", "UTC", kWednesday, "2025-01-01T00:00:00Z", "next year"},
      {"59 23 31 12 *", "UTC", kWednesday, "2024-12-31T23:59:00Z", "last minute of year"},
      {"0 0 1 1 *", "UTC", "2024-12-31T23:59:59Z", "2025-01-01T00:00:00Z", "year rollover"},
  });
}

TEST(NextFireTime, IsStrictlyAfterTheGivenInstant) {
  expectCases({
      {"*/15 * * * *", "UTC", "2024-05-15T10:15:00Z", "2024-05-15T10:30:00Z", "on a fire time"},
      {"*/15 * * * *", "UTC", "2024-05-15T10:14:59.999Z", "2024-05-15T10:15:00Z", "just before"},
      {"*/15 * * * *", "UTC", "2024-05-15T10:15:00.001Z", "2024-05-15T10:30:00Z", "just after"},
  });
}

TEST(NextFireTime, ExpandsMacros) {
  expectCases({
      {"@hourly", "UTC", kWednesday, "2024-05-15T11:00:00Z", "@hourly"},
      {"@daily", "UTC", kWednesday, "2024-05-16T00:00:00Z", "@daily"},
      {"@midnight", "UTC", kWednesday, "2024-05-16T00:00:00Z", "@midnight"},
      {"@weekly", "UTC", kWednesday, "2024-05-19T00:00:00Z", "@weekly: Sunday"},
      {"@monthly", "UTC", kWednesday, "2024-06-01T00:00:00Z", "@monthly"},
      {"@yearly", "UTC", kWednesday, "2025-01-01T00:00:00Z", "@yearly"},
      {"@annually", "UTC", kWednesday, "2025-01-01T00:00:00Z", "@annually"},
  });
}

TEST(NextFireTime, SkipsMonthsWithoutTheDay) {
  expectCases({
      {"0 0 31 * *", "UTC", kWednesday, "2024-05-31T00:00:00Z", "May has 31 days"},
      {"0 0 31 * *", "UTC", "2024-06-01T00:00:00Z", "2024-07-31T00:00:00Z", "June has 30"},
      {"0 0 31 * *", "UTC", "2024-09-01T00:00:00Z", "2024-10-31T00:00:00Z", "September has 30"},
      {"0 0 30 * *", "UTC", "2025-02-01T00:00:00Z", "2025-03-30T00:00:00Z", "February has 28"},
      {"0 0 31 4,6,9,11 *", "UTC", kWednesday, nullptr, "those months have 30 days"},
      {"0 0 30 2 *", "UTC", kWednesday, nullptr, "February never has 30 days"},
  });
}

TEST(NextFireTime, FebruaryTwentyNinthWaitsForALeapYear) {
  expectCases({
      {"0 0 29 2 *", "UTC", kWednesday, "2028-02-29T00:00:00Z", "2025-2027 are common years"},
      {"0 0 29 2 *", "UTC", "2023-03-01T00:00:00Z", "2024-02-29T00:00:00Z", "2024 is leap"},
      {"0 12 29 feb *", "UTC", "2024-02-29T11:00:00Z", "2024-02-29T12:00:00Z", "same day"},
      {"0 0 29 2 *", "UTC", "2099-03-01T00:00:00Z", "2104-02-29T00:00:00Z",
       "2100 is not a leap year"},
      {"0 0 29 2 *", "UTC", "2096-03-01T00:00:00Z", nullptr,
       "2104 is beyond the five-year horizon"},
  });
}

TEST(NextFireTime, AppliesTheDayFieldOrRule) {
  expectCases({
      {"0 0 13 * fri", "UTC", kWednesday, "2024-05-17T00:00:00Z", "a Friday before the 13th"},
      {"0 0 13 * *", "UTC", kWednesday, "2024-06-13T00:00:00Z", "day-of-month alone"},
      {"0 0 * * fri", "UTC", kWednesday, "2024-05-17T00:00:00Z", "day-of-week alone"},
      {"0 0 1 * mon", "UTC", kWednesday, "2024-05-20T00:00:00Z", "Monday before the 1st"},
      {"0 0 1-31/2 * mon", "UTC", kWednesday, "2024-05-17T00:00:00Z",
       "both restricted: odd day OR Monday"},
      {"0 0 */2 * mon", "UTC", kWednesday, "2024-05-27T00:00:00Z",
       "leading '*': odd day AND Monday (20 May is even)"},
  });
}

TEST(NextFireTime, EvaluatesInTheScheduleTimezone) {
  expectCases({
      {"0 9 * * *", "Europe/Berlin", kWednesday, "2024-05-16T07:00:00Z", "CEST is +2"},
      {"0 9 * * *", "America/New_York", kWednesday, "2024-05-15T13:00:00Z", "EDT is -4"},
      {"0 9 * * *", "Asia/Kathmandu", "2024-05-15T00:00:00Z", "2024-05-15T03:15:00Z", "+5:45"},
      {"0 0 * * *", "Asia/Kathmandu", "2024-05-15T00:00:00Z", "2024-05-15T18:15:00Z",
       "local midnight"},
      {"0 0 * * sun", "Pacific/Auckland", "2024-05-17T12:00:00Z", "2024-05-18T12:00:00Z",
       "the local weekday, not the UTC one"},
  });
}

TEST(NextFireTime, SkipsLocalTimesInASpringForwardGap) {
  // Europe/Berlin 2024-03-31: 02:00 CET -> 03:00 CEST (01:00Z).
  // America/New_York 2024-03-10: 02:00 EST -> 03:00 EDT (07:00Z).
  expectCases({
      {"30 2 * * *", "Europe/Berlin", "2024-03-30T00:00:00Z", "2024-03-30T01:30:00Z",
       "the day before fires at 02:30 CET"},
      {"30 2 * * *", "Europe/Berlin", "2024-03-30T12:00:00Z", "2024-04-01T00:30:00Z",
       "02:30 does not exist on 31 March"},
      {"*/30 2 * * *", "Europe/Berlin", "2024-03-31T00:00:00Z", "2024-04-01T00:00:00Z",
       "the whole 02 hour is skipped"},
      {"59 1 * * *", "Europe/Berlin", "2024-03-30T12:00:00Z", "2024-03-31T00:59:00Z",
       "01:59 CET still exists"},
      {"0 3 * * *", "Europe/Berlin", "2024-03-30T12:00:00Z", "2024-03-31T01:00:00Z",
       "03:00 CEST is the first minute after the gap"},
      {"* * * * *", "Europe/Berlin", "2024-03-31T00:59:00Z", "2024-03-31T01:00:00Z",
       "every minute: 01:59 CET is followed by 03:00 CEST"},
      {"30 2 * * *", "America/New_York", "2024-03-09T12:00:00Z", "2024-03-11T06:30:00Z",
       "02:30 does not exist on 10 March"},
      {"0 0 * * *", "America/New_York", "2024-03-10T06:00:00Z", "2024-03-11T04:00:00Z",
       "midnight after the switch is EDT"},
  });
}

TEST(NextFireTime, FiresOnceForLocalTimesInAFallBackOverlap) {
  // Europe/Berlin 2024-10-27: 02:00-02:59 runs twice, CEST (00:xxZ) then CET (01:xxZ).
  // America/New_York 2024-11-03: 01:00-01:59 runs twice, EDT (05:xxZ) then EST (06:xxZ).
  expectCases({
      {"30 2 * * *", "Europe/Berlin", "2024-10-26T12:00:00Z", "2024-10-27T00:30:00Z",
       "first pass, CEST"},
      {"30 2 * * *", "Europe/Berlin", "2024-10-27T00:30:00Z", "2024-10-28T01:30:00Z",
       "not again on the second pass"},
      {"0 * * * *", "Europe/Berlin", "2024-10-27T00:00:00Z", "2024-10-27T02:00:00Z",
       "hourly: 02:00 CET is a repeat, next is 03:00 CET"},
      {"* * * * *", "Europe/Berlin", "2024-10-27T00:59:00Z", "2024-10-27T02:00:00Z",
       "every minute: the repeated hour does not fire again"},
      {"30 1 * * *", "America/New_York", "2024-11-02T12:00:00Z", "2024-11-03T05:30:00Z",
       "first pass, EDT"},
      {"30 1 * * *", "America/New_York", "2024-11-03T05:30:00Z", "2024-11-04T06:30:00Z",
       "not at 06:30Z, the EST pass"},
      {"30 1 * * *", "America/New_York", "2024-11-03T06:10:00Z", "2024-11-04T06:30:00Z",
       "asked from inside the second pass"},
  });
}

TEST(NextFireTime, HandlesHalfHourDaylightSavingInLordHowe) {
  // Australia/Lord_Howe: +10:30 standard, +11 daylight saving, switching by 30 minutes.
  // 2024-10-06: 02:00 -> 02:30. 2024-04-07: 02:00 -> 01:30, so 01:30-01:59 runs twice.
  expectCases({
      {"15 2 * * *", "Australia/Lord_Howe", "2024-10-04T00:00:00Z", "2024-10-04T15:45:00Z",
       "02:15 at +10:30"},
      {"15 2 * * *", "Australia/Lord_Howe", "2024-10-05T00:00:00Z", "2024-10-06T15:15:00Z",
       "02:15 does not exist on 6 October"},
      {"45 2 * * *", "Australia/Lord_Howe", "2024-10-05T00:00:00Z", "2024-10-05T15:45:00Z",
       "02:45 exists, at +11"},
      {"45 1 * * *", "Australia/Lord_Howe", "2024-04-06T00:00:00Z", "2024-04-06T14:45:00Z",
       "first pass at +11"},
      {"45 1 * * *", "Australia/Lord_Howe", "2024-04-06T14:45:00Z", "2024-04-07T15:15:00Z",
       "not again at +10:30 the same night"},
  });
}

TEST(NextFireTime, HandlesKathmandusQuarterHourSwitch) {
  // Asia/Kathmandu moved from +05:30 to +05:45 at local midnight starting 1986.
  expectCases({
      {"5 0 * * *", "Asia/Kathmandu", "1985-12-31T00:00:00Z", "1986-01-01T18:20:00Z",
       "00:05 on 1 January 1986 does not exist"},
      {"20 0 * * *", "Asia/Kathmandu", "1985-12-31T00:00:00Z", "1985-12-31T18:35:00Z",
       "00:20 exists, at +05:45"},
  });
}

TEST(NextFireTime, FollowsDaylightSavingRulesBeyondTheZoneTable) {
  // Debian's zone files list transitions up to 2037; later ones come from the file's TZ rule.
  // Europe/Berlin 2040-03-25 02:00 -> 03:00; America/New_York 2050-11-06 02:00 -> 01:00.
  expectCases({
      {"0 12 1 7 *", "Europe/Berlin", "2040-01-01T00:00:00Z", "2040-07-01T10:00:00Z",
       "CEST in July 2040"},
      {"30 2 * * *", "Europe/Berlin", "2040-03-24T12:00:00Z", "2040-03-26T00:30:00Z",
       "gap on 25 March 2040"},
      {"30 1 * * *", "America/New_York", "2050-11-05T12:00:00Z", "2050-11-06T05:30:00Z",
       "first pass of the 2050 overlap"},
      {"30 1 * * *", "America/New_York", "2050-11-06T05:30:00Z", "2050-11-07T06:30:00Z",
       "no second pass in 2050"},
  });
}

TEST(NextFireTimes, ListsSuccessiveFireTimesAcrossAnOverlap) {
  const auto cron = CronExpression::parse("30 1 * * *").value();
  const auto times =
      nextFireTimes(cron, zoneNamed("America/New_York"), at("2024-11-02T12:00:00Z"), 3);
  ASSERT_EQ(times.size(), 3U);
  EXPECT_EQ(show(times[0]), "2024-11-03T05:30:00.000Z");
  EXPECT_EQ(show(times[1]), "2024-11-04T06:30:00.000Z");
  EXPECT_EQ(show(times[2]), "2024-11-05T06:30:00.000Z");
}

TEST(NextFireTimes, StopsWhenNoFireTimeIsLeft) {
  const auto never = CronExpression::parse("0 0 30 2 *").value();
  EXPECT_TRUE(nextFireTimes(never, zoneNamed("UTC"), at(kWednesday), 5).empty());
  const auto leap = CronExpression::parse("0 0 29 2 *").value();
  // 2092 and 2096 are found; the search from 2096 cannot reach 2104.
  const auto times = nextFireTimes(leap, zoneNamed("UTC"), at("2091-01-01T00:00:00Z"), 5);
  ASSERT_EQ(times.size(), 2U);
  EXPECT_EQ(show(times[1]), "2096-02-29T00:00:00.000Z");
  EXPECT_TRUE(nextFireTimes(leap, zoneNamed("UTC"), at(kWednesday), 0).empty());
}

TEST(NextFireTime, ReturnsNothingPastTheLastRepresentableInstant) {
  const auto cron = CronExpression::parse("0 0 1 1 *").value();
  // WallTime (64-bit nanoseconds) ends in April 2262.
  EXPECT_EQ(show(nextFireTime(cron, zoneNamed("UTC"), at("2262-01-01T00:00:00Z"))), "none");
  EXPECT_EQ(show(nextFireTime(cron, zoneNamed("UTC"), WallTime::max())), "none");
}

TEST(IsFireTime, AcceptsRealFiringsOnly) {
  const auto quarter = CronExpression::parse("*/15 * * * *").value();
  const TimeZone utc = zoneNamed("UTC");
  EXPECT_TRUE(isFireTime(quarter, utc, at("2024-05-15T10:15:00Z")));
  EXPECT_FALSE(isFireTime(quarter, utc, at("2024-05-15T10:16:00Z")));
  EXPECT_FALSE(isFireTime(quarter, utc, at("2024-05-15T10:15:30Z")));
  EXPECT_FALSE(isFireTime(quarter, utc, at("2024-05-15T10:15:00.000001Z")));

  const auto nine = CronExpression::parse("0 9 * * *").value();
  EXPECT_TRUE(isFireTime(nine, zoneNamed("Asia/Kathmandu"), at("2024-05-15T03:15:00Z")));
  EXPECT_FALSE(isFireTime(nine, zoneNamed("Asia/Kathmandu"), at("2024-05-15T03:00:00Z")));
  EXPECT_FALSE(isFireTime(nine, zoneNamed("Asia/Kathmandu"), at("2024-05-15T09:00:00Z")));
}

TEST(IsFireTime, RejectsTimesTheClocksSkippedAndSecondPasses) {
  const auto cron = CronExpression::parse("30 2 * * *").value();
  const TimeZone berlin = zoneNamed("Europe/Berlin");
  // 02:30 on 2024-03-31 would be 01:30Z at +1 or 00:30Z at +2; both instants read otherwise.
  EXPECT_FALSE(isFireTime(cron, berlin, at("2024-03-31T01:30:00Z")));
  EXPECT_FALSE(isFireTime(cron, berlin, at("2024-03-31T00:30:00Z")));
  EXPECT_TRUE(isFireTime(cron, berlin, at("2024-10-27T00:30:00Z")));
  EXPECT_FALSE(isFireTime(cron, berlin, at("2024-10-27T01:30:00Z")));
}

// An independent reference: walk every UTC minute, read the wall clock, and fire the first
// time each matching local minute is seen.
std::vector<WallTime> bruteForce(const CronExpression& cron, const TimeZone& zone, WallTime from,
                                 WallTime to) {
  std::vector<WallTime> fires;
  std::set<date::local_seconds> seen;
  for (WallTime t = from; t <= to; t += std::chrono::minutes(1)) {
    const date::local_seconds local = zone.toLocal(date::floor<std::chrono::seconds>(t));
    const auto day = date::floor<date::days>(local);
    const date::year_month_day ymd{day};
    const date::hh_mm_ss<std::chrono::seconds> time{local - day};
    const CivilMinute civil{.year = static_cast<int>(ymd.year()),
                            .month = static_cast<unsigned>(ymd.month()),
                            .day = static_cast<unsigned>(ymd.day()),
                            .hour = static_cast<unsigned>(time.hours().count()),
                            .minute = static_cast<unsigned>(time.minutes().count()),
                            .weekday = date::weekday{day}.c_encoding()};
    if (cron.matchesLocal(civil) && seen.insert(local).second) fires.push_back(t);
  }
  return fires;
}

TEST(NextFireTime, AgreesWithAMinuteByMinuteReferenceAroundTransitions) {
  const char* crons[] = {"* * * * *",    "*/7 * * * *",   "30 2 * * *",  "0,30 1-3 * * *",
                         "15 0 * * *",   "45 1 1-10 * 0", "0 */2 * * *", "59 23 * * *",
                         "5/20 2 * * *", "0 0 1-7 * sun"};
  struct Window {
    const char* zone;
    const char* from;
  };
  const Window windows[] = {
      {"Europe/Berlin", "2024-03-30T00:00:00Z"},
      {"Europe/Berlin", "2024-10-26T00:00:00Z"},
      {"America/New_York", "2024-11-02T00:00:00Z"},
      {"Australia/Lord_Howe", "2024-04-05T00:00:00Z"},
      {"Australia/Lord_Howe", "2024-10-04T00:00:00Z"},
      {"Asia/Kathmandu", "1985-12-30T00:00:00Z"},
      {"Europe/Berlin", "2040-03-24T00:00:00Z"},
      {"America/New_York", "2050-11-05T00:00:00Z"},
  };
  for (const Window& window : windows) {
    const TimeZone zone = zoneNamed(window.zone);
    const WallTime from = at(window.from);
    const WallTime to = from + std::chrono::hours(72);
    for (const char* text : crons) {
      const auto cron = CronExpression::parse(text).value();
      const std::vector<WallTime> expected = bruteForce(cron, zone, from, to);
      std::vector<WallTime> actual;
      // Start one minute early so a fire time exactly at `from` is included.
      for (auto t = nextFireTime(cron, zone, from - std::chrono::minutes(1)); t && *t <= to;
           t = nextFireTime(cron, zone, *t)) {
        actual.push_back(*t);
        EXPECT_TRUE(isFireTime(cron, zone, *t)) << text << " " << show(*t);
      }
      ASSERT_EQ(actual.size(), expected.size()) << text << " in " << window.zone;
      for (std::size_t i = 0; i < actual.size(); ++i) {
        EXPECT_EQ(show(actual[i]), show(expected[i])) << text << " in " << window.zone;
      }
    }
  }
}

TEST(IsFireTime, IsFalseForEveryMinuteBetweenFireTimes) {
  const auto cron = CronExpression::parse("*/20 1-2 * * *").value();
  const TimeZone zone = zoneNamed("Europe/Berlin");
  const WallTime from = at("2024-10-26T20:00:00Z");
  std::set<WallTime> fires;
  for (const WallTime t : nextFireTimes(cron, zone, from, 20)) fires.insert(t);
  for (WallTime t = from; t < *fires.rbegin(); t += std::chrono::minutes(1)) {
    EXPECT_EQ(isFireTime(cron, zone, t), fires.contains(t)) << show(t);
  }
}

}  // namespace
}  // namespace relay::schedule
