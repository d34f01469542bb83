// schedule/fire_window.h: the fire times a backfill window covers (docs/schedules.md
// "Backfill"), with the publisher's DST rules (docs/schedules.md "Daylight saving time").
#include "schedule/fire_window.h"

#include <gtest/gtest.h>

#include "schedule/next_fire.h"
#include "unit/schedule/time_text.h"

namespace relay::schedule {
namespace {

using testing::at;
using testing::show;

std::vector<std::string> window(const char* cron_text, const char* zone_name, const char* from,
                                const char* to, std::size_t limit = 10'000) {
  const auto cron = CronExpression::parse(cron_text);
  EXPECT_TRUE(cron.ok()) << cron_text;
  const auto zone = TimeZone::load(zone_name);
  EXPECT_TRUE(zone.ok()) << zone_name;
  if (!cron.ok() || !zone.ok()) return {};
  std::vector<std::string> shown;
  for (const WallTime time : fireTimesWithin(*cron, *zone, at(from), at(to), limit)) {
    shown.push_back(formatRfc3339(time));
  }
  return shown;
}

using Times = std::vector<std::string>;

TEST(FireTimesWithin, BothEndsAreInclusive) {
  EXPECT_EQ(window("* * * * *", "UTC", "2024-05-16T10:00:00Z", "2024-05-16T10:03:00Z"),
            (Times{"2024-05-16T10:00:00Z", "2024-05-16T10:01:00Z", "2024-05-16T10:02:00Z",
                   "2024-05-16T10:03:00Z"}));
  EXPECT_EQ(window("* * * * *", "UTC", "2024-05-16T10:00:00Z", "2024-05-16T10:00:00Z"),
            (Times{"2024-05-16T10:00:00Z"}));
}

TEST(FireTimesWithin, EndsBetweenMinutesCutToTheMinutesInside) {
  EXPECT_EQ(window("* * * * *", "UTC", "2024-05-16T10:00:00.001Z", "2024-05-16T10:02:59.999Z"),
            (Times{"2024-05-16T10:01:00Z", "2024-05-16T10:02:00Z"}));
  EXPECT_EQ(window("* * * * *", "UTC", "2024-05-16T10:00:30Z", "2024-05-16T10:00:59Z"), Times{});
}

TEST(FireTimesWithin, AReversedOrEmptyWindowHasNone) {
  EXPECT_EQ(window("* * * * *", "UTC", "2024-05-16T10:05:00Z", "2024-05-16T10:00:00Z"), Times{});
  EXPECT_EQ(window("0 0 30 2 *", "UTC", "2024-01-01T00:00:00Z", "2024-12-31T23:59:00Z"), Times{})
      << "a cron that never fires";
}

TEST(FireTimesWithin, ASkippedLocalTimeDoesNotFire) {
  // Europe/Berlin, 2024-03-31: 02:00 CET jumps to 03:00 CEST; 02:30 does not exist that day.
  EXPECT_EQ(window("30 2 * * *", "Europe/Berlin", "2024-03-30T00:00:00Z", "2024-04-02T00:00:00Z"),
            (Times{"2024-03-30T01:30:00Z", "2024-04-01T00:30:00Z"}));
  // Every minute goes from 01:59 CET straight to 03:00 CEST: no UTC minute is missing.
  EXPECT_EQ(window("* * * * *", "Europe/Berlin", "2024-03-31T00:58:00Z", "2024-03-31T01:01:00Z"),
            (Times{"2024-03-31T00:58:00Z", "2024-03-31T00:59:00Z", "2024-03-31T01:00:00Z",
                   "2024-03-31T01:01:00Z"}));
}

TEST(FireTimesWithin, ARepeatedLocalTimeFiresOnItsFirstPassOnly) {
  // America/New_York, 2024-11-03: 01:30 EDT (05:30Z) fires, 01:30 EST (06:30Z) does not.
  EXPECT_EQ(
      window("30 1 * * *", "America/New_York", "2024-11-03T04:00:00Z", "2024-11-03T07:00:00Z"),
      (Times{"2024-11-03T05:30:00Z"}));
  // Europe/Berlin, 2024-10-27: hourly fires at 02:00 CEST and next at 03:00 CET.
  EXPECT_EQ(window("0 * * * *", "Europe/Berlin", "2024-10-26T23:00:00Z", "2024-10-27T03:00:00Z"),
            (Times{"2024-10-26T23:00:00Z", "2024-10-27T00:00:00Z", "2024-10-27T02:00:00Z",
                   "2024-10-27T03:00:00Z"}));
  // Every minute pauses for the repeated hour: 60 firings in these two UTC hours, not 120.
  EXPECT_EQ(
      window("* * * * *", "Europe/Berlin", "2024-10-27T00:00:00Z", "2024-10-27T01:59:00Z").size(),
      60u);
}

TEST(FireTimesWithin, AThirtyMinuteTransitionIsHonoured) {
  // Australia/Lord_Howe, 2024-10-06: 02:00 +10:30 becomes 02:30 +11; 02:15 does not exist.
  EXPECT_EQ(
      window("15 2 * * *", "Australia/Lord_Howe", "2024-10-04T00:00:00Z", "2024-10-07T00:00:00Z"),
      (Times{"2024-10-04T15:45:00Z", "2024-10-06T15:15:00Z"}));
}

TEST(FireTimesWithin, DayFieldsLeapDaysAndStepsFollowTheCron) {
  // Both day fields restricted: the 13th OR a Friday (June 2024: the 13th is a Thursday).
  EXPECT_EQ(window("0 0 13 * fri", "UTC", "2024-06-01T00:00:00Z", "2024-06-30T23:59:00Z"),
            (Times{"2024-06-07T00:00:00Z", "2024-06-13T00:00:00Z", "2024-06-14T00:00:00Z",
                   "2024-06-21T00:00:00Z", "2024-06-28T00:00:00Z"}));
  EXPECT_EQ(window("0 12 29 2 *", "UTC", "2023-02-01T00:00:00Z", "2024-03-01T00:00:00Z"),
            (Times{"2024-02-29T12:00:00Z"}));
  EXPECT_EQ(window("50-59/5 23 31 12 *", "UTC", "2024-12-31T23:00:00Z", "2025-01-01T01:00:00Z"),
            (Times{"2024-12-31T23:50:00Z", "2024-12-31T23:55:00Z"}))
      << "a window across the year's end";
}

TEST(FireTimesWithin, EveryFireTimeIsOneThePublisherWouldPublish) {
  const auto cron = CronExpression::parse("*/7 0-3 * * *");
  const auto zone = TimeZone::load("Europe/Berlin");
  ASSERT_TRUE(cron.ok() && zone.ok());
  const auto times =
      fireTimesWithin(*cron, *zone, at("2024-10-26T00:00:00Z"), at("2024-10-28T00:00:00Z"), 1000);
  ASSERT_FALSE(times.empty());
  WallTime previous = at("2024-10-25T23:59:59Z");
  for (const WallTime time : times) {
    EXPECT_TRUE(isFireTime(*cron, *zone, time)) << show(time);
    EXPECT_EQ(show(nextFireTime(*cron, *zone, previous)), show(time)) << "none in between";
    previous = time;
  }
}

TEST(FireTimesWithin, TheLimitBoundsTheWalk) {
  EXPECT_EQ(window("* * * * *", "UTC", "2024-05-14T00:00:30Z", "2024-05-16T00:00:00Z").size(),
            2880u)
      << "every minute over the 48 h a record lives";
  EXPECT_EQ(window("* * * * *", "UTC", "2024-05-14T00:00:00Z", "2024-05-16T00:00:00Z", 10),
            (window("* * * * *", "UTC", "2024-05-14T00:00:00Z", "2024-05-14T00:09:00Z")));
}

}  // namespace
}  // namespace relay::schedule
