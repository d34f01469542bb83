#include "schedule/occurrence_planner.h"

#include <gtest/gtest.h>

#include <string>

#include "fakes/fake_clock.h"
#include "schedule/next_fire.h"
#include "unit/schedule/time_text.h"

namespace relay::schedule {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;
using testing::at;
using testing::show;

CronExpression cronOf(const char* text) {
  auto cron = CronExpression::parse(text);
  EXPECT_TRUE(cron.ok()) << text;
  return cron.ok() ? *cron : *CronExpression::parse("* * * * *");
}

TimeZone zoneOf(const char* name) {
  auto zone = TimeZone::load(name);
  EXPECT_TRUE(zone.ok()) << name;
  return zone.ok() ? *zone : *TimeZone::load("UTC");
}

/// A planner driven by a FakeClock the way the publisher drives it: one round per call.
class Planner : public ::testing::Test {
 protected:
  /// One complete round at the clock's time in which `key` publishes successfully (or not).
  std::optional<WallTime> round(const std::string& key, const CronExpression& cron,
                                bool publish_ok = true, const char* zone = "UTC") {
    planner_.beginRound(clock_.now());
    const auto due = planner_.due(key, cron, zoneOf(zone));
    if (!publish_ok) return due;  // abandoned: no markDone, no endRound
    planner_.markDone(key, due);
    planner_.endRound();
    return due;
  }

  relay::testing::FakeClock clock_{at("2024-05-16T10:00:05Z")};
  OccurrencePlanner planner_;
};

TEST(LatestFireTime, IsTheLastFireTimeInAHalfOpenWindow) {
  const CronExpression every_five = cronOf("*/5 * * * *");
  const TimeZone utc = zoneOf("UTC");
  EXPECT_EQ(
      show(latestFireTime(every_five, utc, at("2024-05-16T10:00:00Z"), at("2024-05-16T10:17:00Z"))),
      "2024-05-16T10:15:00.000Z");
  EXPECT_EQ(
      show(latestFireTime(every_five, utc, at("2024-05-16T10:00:00Z"), at("2024-05-16T10:15:00Z"))),
      "2024-05-16T10:15:00.000Z")
      << "the upper end is included";
  EXPECT_EQ(
      show(latestFireTime(every_five, utc, at("2024-05-16T10:00:00Z"), at("2024-05-16T10:04:59Z"))),
      "none")
      << "the lower end is excluded";
  EXPECT_EQ(
      show(latestFireTime(every_five, utc, at("2024-05-16T10:20:00Z"), at("2024-05-16T10:10:00Z"))),
      "none")
      << "an empty window";
}

TEST_F(Planner, FirstRoundCatchesUpTheLatestOccurrenceOfTheLastDay) {
  planner_.beginRound(clock_.now());
  EXPECT_EQ(show(planner_.due("app/nightly", cronOf("0 3 * * *"), zoneOf("UTC"))),
            "2024-05-16T03:00:00.000Z");
  EXPECT_EQ(show(planner_.due("app/hourly", cronOf("@hourly"), zoneOf("UTC"))),
            "2024-05-16T10:00:00.000Z");
}

TEST_F(Planner, FirstRoundIgnoresOccurrencesOlderThanADay) {
  // Yesterday (the 15th) 10:00 is 24h05s ago: just outside the window.
  EXPECT_EQ(show(round("app/monthly", cronOf("0 10 15 * *"))), "none");
  EXPECT_EQ(show(round("app/weekly", cronOf("0 9 * * 1"))), "none") << "Monday, 3 days ago";
}

TEST_F(Planner, CatchUpWindowIsConfigurable) {
  OccurrencePlanner short_window(minutes(30));
  short_window.beginRound(at("2024-05-16T10:00:05Z"));
  EXPECT_EQ(show(short_window.due("app/s", cronOf("40 9 * * *"), zoneOf("UTC"))),
            "2024-05-16T09:40:00.000Z");
  EXPECT_EQ(show(short_window.due("app/t", cronOf("20 9 * * *"), zoneOf("UTC"))), "none");
}

TEST_F(Planner, ARoundEveryMinutePublishesEveryMinuteOnce) {
  const CronExpression every_minute = cronOf("* * * * *");
  EXPECT_EQ(show(round("app/tick", every_minute)), "2024-05-16T10:00:00.000Z");
  clock_.advance(seconds(20));
  EXPECT_EQ(show(round("app/tick", every_minute)), "none") << "same minute again";
  for (int minute = 1; minute <= 5; ++minute) {
    clock_.advance(seconds(40));  // the next round, a few seconds into the minute
    const auto due = round("app/tick", every_minute);
    EXPECT_EQ(show(due), "2024-05-16T10:0" + std::to_string(minute) + ":00.000Z");
    clock_.advance(seconds(20));
  }
}

TEST_F(Planner, AfterAnOutageOnlyTheLatestMissedOccurrenceIsDue) {
  const CronExpression every_minute = cronOf("* * * * *");
  ASSERT_EQ(show(round("app/tick", every_minute)), "2024-05-16T10:00:00.000Z");
  const auto watermark = planner_.watermark("app/tick");
  for (int failed = 0; failed < 7; ++failed) {
    clock_.advance(minutes(1));
    EXPECT_TRUE(round("app/tick", every_minute, /*publish_ok=*/false).has_value());
  }
  EXPECT_EQ(show(planner_.watermark("app/tick")), show(watermark)) << "failures keep it";
  clock_.advance(minutes(1));
  EXPECT_EQ(show(round("app/tick", every_minute)), "2024-05-16T10:08:00.000Z");
  EXPECT_EQ(show(planner_.watermark("app/tick")), "2024-05-16T10:08:05.000Z");
}

TEST_F(Planner, AnOutageLongerThanADayPublishesOnlyWhatIsWithinTheDay) {
  const CronExpression nightly = cronOf("0 3 * * *");
  ASSERT_EQ(show(round("app/nightly", nightly)), "2024-05-16T03:00:00.000Z");
  clock_.advance(hours(50));  // 2024-05-18T12:00:05Z: missed the 17th and the 18th
  EXPECT_EQ(show(round("app/nightly", nightly)), "2024-05-18T03:00:00.000Z");
  clock_.advance(hours(40));  // 2024-05-20T04:00:05Z; 03:00 of the 19th is over 24h ago
  EXPECT_EQ(show(round("app/nightly", nightly)), "2024-05-20T03:00:00.000Z");
}

TEST_F(Planner, AScheduleThatFailsItsCatchUpStaysInCatchUp) {
  const CronExpression nightly = cronOf("0 3 * * *");
  EXPECT_TRUE(round("app/nightly", nightly, /*publish_ok=*/false).has_value());
  EXPECT_FALSE(planner_.watermark("app/nightly").has_value());
  clock_.advance(minutes(30));
  EXPECT_EQ(show(round("app/nightly", nightly)), "2024-05-16T03:00:00.000Z");
}

TEST_F(Planner, AScheduleAddedWhileRunningHasMissedNothing) {
  ASSERT_EQ(show(round("app/tick", cronOf("* * * * *"))), "2024-05-16T10:00:00.000Z");
  clock_.advance(minutes(1));
  planner_.beginRound(clock_.now());
  EXPECT_EQ(show(planner_.due("app/tick", cronOf("* * * * *"), zoneOf("UTC"))),
            "2024-05-16T10:01:00.000Z");
  EXPECT_EQ(show(planner_.due("app/nightly", cronOf("0 3 * * *"), zoneOf("UTC"))), "none")
      << "03:00 was before the previous round: not missed, the schedule did not exist";
  EXPECT_EQ(show(planner_.due("app/new-tick", cronOf("* * * * *"), zoneOf("UTC"))),
            "2024-05-16T10:01:00.000Z")
      << "a fire time since the previous round is due";
}

TEST_F(Planner, ForgetsRemovedSchedulesButNotInAnAbandonedRound) {
  const CronExpression nightly = cronOf("0 3 * * *");
  ASSERT_TRUE(round("app/nightly", nightly).has_value());
  ASSERT_TRUE(planner_.watermark("app/nightly").has_value());
  clock_.advance(minutes(1));
  planner_.beginRound(clock_.now());  // abandoned before it reached app/nightly
  EXPECT_TRUE(planner_.watermark("app/nightly").has_value());
  planner_.beginRound(clock_.now());
  planner_.endRound();  // a complete round without it: the schedule was removed
  EXPECT_FALSE(planner_.watermark("app/nightly").has_value());
}

TEST_F(Planner, EvaluatesInTheScheduleTimezone) {
  // 03:00 in Berlin (CEST, +2) is 01:00Z; in New York (EDT, -4) it is 07:00Z.
  planner_.beginRound(clock_.now());
  EXPECT_EQ(show(planner_.due("app/berlin", cronOf("0 3 * * *"), zoneOf("Europe/Berlin"))),
            "2024-05-16T01:00:00.000Z");
  EXPECT_EQ(show(planner_.due("app/new-york", cronOf("0 3 * * *"), zoneOf("America/New_York"))),
            "2024-05-16T07:00:00.000Z");
}

TEST_F(Planner, ARepeatedLocalTimeIsDueOnceAcrossAFallBack) {
  // Europe/Berlin 2024-10-27: 02:30 local is 00:30Z (CEST) and again 01:30Z (CET).
  clock_.setWall(at("2024-10-27T00:29:05Z"));
  const CronExpression half_past_two = cronOf("30 2 * * *");
  const auto first = round("app/b", half_past_two, true, "Europe/Berlin");
  EXPECT_EQ(show(first), "2024-10-26T00:30:00.000Z") << "yesterday's, caught up";
  int due = 0;
  for (int minute = 0; minute < 120; ++minute) {
    clock_.advance(minutes(1));
    if (auto occurrence = round("app/b", half_past_two, true, "Europe/Berlin")) {
      ++due;
      EXPECT_EQ(show(occurrence), "2024-10-27T00:30:00.000Z");
    }
  }
  EXPECT_EQ(due, 1);
}

// docs/schedules.md "Failover": what a round rechecks.
std::vector<std::string> recentOf(const OccurrencePlanner& planner) {
  std::vector<std::string> found;
  for (const RecentOccurrence& occurrence : planner.recent()) {
    found.push_back(occurrence.key + "@" + show(occurrence.scheduled_at));
  }
  return found;
}

TEST_F(Planner, RemembersWhatItDealtWithForTheRecheckWindow) {
  const CronExpression every_minute = cronOf("* * * * *");
  for (int minute = 0; minute < 3; ++minute) {  // 10:00, 10:01, 10:02
    round("tick", every_minute);
    clock_.advance(minutes(1));
  }
  planner_.beginRound(clock_.now());  // 10:03:05: the round checks before it publishes
  EXPECT_EQ(recentOf(planner_), (std::vector<std::string>{"tick@2024-05-16T10:00:00.000Z",
                                                          "tick@2024-05-16T10:01:00.000Z",
                                                          "tick@2024-05-16T10:02:00.000Z"}));
  planner_.markDone("tick", planner_.due("tick", every_minute, zoneOf("UTC")));  // 10:03
  planner_.endRound();
  clock_.advance(minutes(9));  // 10:12:05: 10:02 was dealt with at 10:02:05, 10 minutes ago
  round("tick", every_minute);
  planner_.beginRound(clock_.now());
  EXPECT_EQ(recentOf(planner_), (std::vector<std::string>{"tick@2024-05-16T10:02:00.000Z",
                                                          "tick@2024-05-16T10:03:00.000Z",
                                                          "tick@2024-05-16T10:12:00.000Z"}));
}

TEST_F(Planner, KeepsAtMostTheLatestFewPerSchedule) {
  OccurrencePlanner planner(hours(24), minutes(10), 2);
  const TimeZone utc = zoneOf("UTC");
  for (int minute = 0; minute < 4; ++minute) {
    planner.beginRound(clock_.now());
    planner.markDone("tick", planner.due("tick", cronOf("* * * * *"), utc));
    planner.endRound();
    clock_.advance(minutes(1));
  }
  planner.beginRound(clock_.now());
  EXPECT_EQ(recentOf(planner), (std::vector<std::string>{"tick@2024-05-16T10:02:00.000Z",
                                                         "tick@2024-05-16T10:03:00.000Z"}));
}

TEST_F(Planner, AnOutageDoesNotAgeWhatTheFirstRoundAfterItRechecks) {
  const CronExpression every_minute = cronOf("* * * * *");
  round("tick", every_minute);                   // 10:00
  for (int minute = 0; minute < 30; ++minute) {  // Redis is down for half an hour
    clock_.advance(minutes(1));
    round("tick", every_minute, /*publish_ok=*/false);
  }
  clock_.advance(minutes(1));
  planner_.beginRound(clock_.now());
  EXPECT_EQ(recentOf(planner_), std::vector<std::string>{"tick@2024-05-16T10:00:00.000Z"})
      << "the occurrence published just before the outage is rechecked on the new master";
}

TEST_F(Planner, NeverRechecksWhatIsOlderThanTheCatchUpWindow) {
  OccurrencePlanner planner(hours(1), minutes(10), 10);
  const TimeZone utc = zoneOf("UTC");
  planner.beginRound(clock_.now());
  planner.markDone("tick", planner.due("tick", cronOf("* * * * *"), utc));
  planner.endRound();
  clock_.advance(hours(2));  // an outage: no round ended since, but the dedupe key may be gone
  planner.beginRound(clock_.now());
  EXPECT_TRUE(planner.recent().empty());
}

TEST_F(Planner, ForgetsTheRecentOccurrencesOfARemovedSchedule) {
  round("tick", cronOf("* * * * *"));
  clock_.advance(minutes(1));
  planner_.beginRound(clock_.now());
  planner_.endRound();  // a complete round that no longer saw "tick"
  planner_.beginRound(clock_.now());
  EXPECT_TRUE(planner_.recent().empty());
}

}  // namespace
}  // namespace relay::schedule
