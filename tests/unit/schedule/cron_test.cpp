#include "schedule/cron.h"

#include <gtest/gtest.h>

#include <string>

namespace relay::schedule {
namespace {

CronExpression parsed(std::string_view text) {
  auto cron = CronExpression::parse(text);
  EXPECT_TRUE(cron.ok()) << text << ": " << (cron.ok() ? "" : cron.error().message);
  if (!cron.ok()) return CronExpression::parse("* * * * *").value();
  return std::move(cron).value();
}

std::string errorOf(std::string_view text) {
  const auto cron = CronExpression::parse(text);
  if (cron.ok()) return "accepted";
  EXPECT_EQ(cron.error().kind, ErrorKind::kInvalidArgument) << text;
  return cron.error().message;
}

// 2024-05-15 is a Wednesday.
CivilMinute minute(unsigned month, unsigned day, unsigned weekday, unsigned hour,
                   unsigned minute_of_hour) {
  return {.year = 2024,
          .month = month,
          .day = day,
          .hour = hour,
          .minute = minute_of_hour,
          .weekday = weekday};
}

TEST(CronExpression, KeepsTheTextWithoutSurroundingWhitespace) {
  EXPECT_EQ(parsed("  */5 * * * *\t").text(), "*/5 * * * *");
  EXPECT_EQ(parsed("@daily").text(), "@daily");
}

TEST(CronExpression, SeparatesFieldsByAnyRunOfBlanks) {
  const CronExpression cron = parsed("0\t12   * *  *");
  EXPECT_TRUE(cron.matchesLocal(minute(5, 15, 3, 12, 0)));
  EXPECT_FALSE(cron.matchesLocal(minute(5, 15, 3, 12, 1)));
}

TEST(CronExpression, StarMatchesEveryMinute) {
  const CronExpression cron = parsed("* * * * *");
  EXPECT_TRUE(cron.matchesLocal(minute(1, 1, 1, 0, 0)));
  EXPECT_TRUE(cron.matchesLocal(minute(12, 31, 2, 23, 59)));
}

TEST(CronExpression, ListsRangesAndStepsSelectMinutes) {
  const CronExpression cron = parsed("1,2,10-12,*/20,33-40/3,55/2 * * * *");
  for (unsigned m = 0; m < 60; ++m) {
    const bool expected = m == 1 || m == 2 || (m >= 10 && m <= 12) || m % 20 == 0 || m == 33 ||
                          m == 36 || m == 39 || m == 55 || m == 57 || m == 59;
    EXPECT_EQ(cron.matchesLocal(minute(5, 15, 3, 8, m)), expected) << "minute " << m;
  }
}

TEST(CronExpression, StartSlashStepRunsToTheFieldMaximum) {
  const CronExpression cron = parsed("0 5/10 * * *");
  for (unsigned h = 0; h < 24; ++h) {
    EXPECT_EQ(cron.matchesLocal(minute(5, 15, 3, h, 0)), h == 5 || h == 15) << "hour " << h;
  }
}

TEST(CronExpression, NextHourAndMinuteFindTheNextAllowedValue) {
  const CronExpression cron = parsed("15,45 9-17/4 * * *");
  EXPECT_EQ(cron.nextMinute(0), 15U);
  EXPECT_EQ(cron.nextMinute(16), 45U);
  EXPECT_EQ(cron.nextMinute(46), std::nullopt);
  EXPECT_EQ(cron.nextHour(0), 9U);
  EXPECT_EQ(cron.nextHour(10), 13U);
  EXPECT_EQ(cron.nextHour(18), std::nullopt);
  EXPECT_EQ(cron.nextHour(100), std::nullopt);
}

TEST(CronExpression, MonthNamesAreCaseInsensitiveAndFormRanges) {
  const CronExpression cron = parsed("0 0 1 Jan,MAR,jul-sep *");
  for (unsigned m = 1; m <= 12; ++m) {
    const bool expected = m == 1 || m == 3 || (m >= 7 && m <= 9);
    EXPECT_EQ(cron.matchesMonth(m), expected) << "month " << m;
  }
}

TEST(CronExpression, DayNamesAreCaseInsensitiveAndFormRanges) {
  const CronExpression cron = parsed("0 0 * * MON-wed,Fri");
  // The day-of-month field is '*', so only the weekday decides.
  for (unsigned wd = 0; wd < 7; ++wd) {
    const bool expected = (wd >= 1 && wd <= 3) || wd == 5;
    EXPECT_EQ(cron.matchesDay(10, wd), expected) << "weekday " << wd;
  }
}

TEST(CronExpression, SevenAndZeroBothMeanSunday) {
  EXPECT_TRUE(parsed("0 0 * * 7").matchesDay(5, 0));
  EXPECT_FALSE(parsed("0 0 * * 7").matchesDay(5, 6));
  EXPECT_TRUE(parsed("0 0 * * 0").matchesDay(5, 0));
  const CronExpression weekend = parsed("0 0 * * 6-7");
  EXPECT_TRUE(weekend.matchesDay(5, 6));
  EXPECT_TRUE(weekend.matchesDay(5, 0));
  EXPECT_FALSE(weekend.matchesDay(5, 1));
}

TEST(CronExpression, BothDayFieldsRestrictedMatchEither) {
  const CronExpression cron = parsed("0 0 13 * fri");
  EXPECT_TRUE(cron.matchesDay(13, 3));   // the 13th, a Wednesday
  EXPECT_TRUE(cron.matchesDay(17, 5));   // a Friday, not the 13th
  EXPECT_FALSE(cron.matchesDay(14, 4));  // neither
}

TEST(CronExpression, AStarredDayFieldMakesBothRequired) {
  // "*/2" starts with '*', so Vixie treats it as unrestricted: both fields must match.
  const CronExpression cron = parsed("0 0 */2 * mon");
  EXPECT_TRUE(cron.matchesDay(3, 1));    // odd day, Monday
  EXPECT_FALSE(cron.matchesDay(20, 1));  // even day, Monday
  EXPECT_FALSE(cron.matchesDay(15, 3));  // odd day, Wednesday
  // The same days written without a leading '*' are "restricted": either one matches.
  const CronExpression either = parsed("0 0 1-31/2 * mon");
  EXPECT_TRUE(either.matchesDay(20, 1));
  EXPECT_TRUE(either.matchesDay(15, 3));
  EXPECT_FALSE(either.matchesDay(16, 4));
}

TEST(CronExpression, MatchesLocalChecksEveryField) {
  const CronExpression cron = parsed("30 9 15 5 *");
  EXPECT_TRUE(cron.matchesLocal(minute(5, 15, 3, 9, 30)));
  EXPECT_FALSE(cron.matchesLocal(minute(5, 15, 3, 9, 31)));
  EXPECT_FALSE(cron.matchesLocal(minute(5, 15, 3, 10, 30)));
  EXPECT_FALSE(cron.matchesLocal(minute(5, 16, 4, 9, 30)));
  EXPECT_FALSE(cron.matchesLocal(minute(6, 15, 6, 9, 30)));
}

TEST(CronExpression, MatchesLocalRejectsImpossibleMinutes) {
  const CronExpression cron = parsed("* * * * *");
  EXPECT_FALSE(cron.matchesLocal(minute(13, 1, 0, 0, 0)));
  EXPECT_FALSE(cron.matchesLocal(minute(1, 32, 0, 0, 0)));
  EXPECT_FALSE(cron.matchesLocal(minute(1, 1, 7, 0, 0)));
  EXPECT_FALSE(cron.matchesLocal(minute(1, 1, 0, 24, 0)));
  EXPECT_FALSE(cron.matchesLocal(minute(1, 1, 0, 0, 60)));
}

TEST(CronExpression, MacrosExpandToTheirFiveFieldForms) {
  struct Case {
    const char* macro;
    CivilMinute fires;
    CivilMinute not_fires;
  };
  const Case cases[] = {
      {"@hourly", minute(5, 15, 3, 7, 0), minute(5, 15, 3, 7, 1)},
      {"@daily", minute(5, 15, 3, 0, 0), minute(5, 15, 3, 1, 0)},
      {"@midnight", minute(5, 15, 3, 0, 0), minute(5, 15, 3, 0, 30)},
      {"@weekly", minute(5, 19, 0, 0, 0), minute(5, 20, 1, 0, 0)},
      {"@monthly", minute(6, 1, 6, 0, 0), minute(6, 2, 0, 0, 0)},
      {"@yearly", minute(1, 1, 1, 0, 0), minute(2, 1, 4, 0, 0)},
      {"@annually", minute(1, 1, 1, 0, 0), minute(1, 2, 2, 0, 0)},
      {"@DAILY", minute(5, 15, 3, 0, 0), minute(5, 15, 3, 0, 1)},
  };
  for (const Case& c : cases) {
    const CronExpression cron = parsed(c.macro);
    EXPECT_TRUE(cron.matchesLocal(c.fires)) << c.macro;
    EXPECT_FALSE(cron.matchesLocal(c.not_fires)) << c.macro;
  }
}

TEST(CronExpression, RejectsWrongFieldCounts) {
  EXPECT_EQ(errorOf("* * * * * *"),
            "expected 5 fields (minute hour day-of-month month day-of-week), got 6");
  EXPECT_EQ(errorOf("* * * *"),
            "expected 5 fields (minute hour day-of-month month day-of-week), got 4");
  EXPECT_EQ(errorOf("  "),
            "cron expression is empty; expected 5 fields (minute hour day-of-month month "
            "day-of-week) or a macro such as @daily");
}

TEST(CronExpression, RejectsOutOfRangeValuesNamingTheField) {
  EXPECT_EQ(errorOf("60 * * * *"), "minute \"60\" is out of range 0-59");
  EXPECT_EQ(errorOf("* 24 * * *"), "hour \"24\" is out of range 0-23");
  EXPECT_EQ(errorOf("0 0 32 * *"), "day-of-month \"32\" is out of range 1-31");
  EXPECT_EQ(errorOf("0 0 0 * *"), "day-of-month \"0\" is out of range 1-31");
  EXPECT_EQ(errorOf("0 0 * 13 *"), "month \"13\" is out of range 1-12");
  EXPECT_EQ(errorOf("0 0 * 0 *"), "month \"0\" is out of range 1-12");
  EXPECT_EQ(errorOf("0 0 * * 8"), "day-of-week \"8\" is out of range 0-7");
  EXPECT_EQ(errorOf("0 0-30 * * *"), "hour \"30\" is out of range 0-23");
  EXPECT_EQ(errorOf("99999999999999999999 * * * *"),
            "minute \"99999999999999999999\" is out of range 0-59");
}

TEST(CronExpression, RejectsBadSteps) {
  EXPECT_EQ(errorOf("*/0 * * * *"), "minute step \"0\" in \"*/0\" is out of range 1-59");
  EXPECT_EQ(errorOf("0 */24 * * *"), "hour step \"24\" in \"*/24\" is out of range 1-23");
  EXPECT_EQ(errorOf("*/ * * * *"), "minute step \"\" in \"*/\" is not a number 1-59");
  EXPECT_EQ(errorOf("*/x * * * *"), "minute step \"x\" in \"*/x\" is not a number 1-59");
  EXPECT_EQ(errorOf("*/5/2 * * * *"), "minute step \"5/2\" in \"*/5/2\" is not a number 1-59");
}

TEST(CronExpression, RejectsReversedAndOpenRanges) {
  EXPECT_EQ(errorOf("5-1 * * * *"), "minute range \"5-1\" is reversed (5 > 1)");
  EXPECT_EQ(errorOf("0 0 * * fri-mon"), "day-of-week range \"fri-mon\" is reversed (5 > 1)");
  EXPECT_EQ(errorOf("0 0 * dec-jan *"), "month range \"dec-jan\" is reversed (12 > 1)");
  EXPECT_EQ(errorOf("-5 * * * *"), "minute range \"-5\" is missing a bound");
  EXPECT_EQ(errorOf("5- * * * *"), "minute range \"5-\" is missing a bound");
}

TEST(CronExpression, RejectsUnknownNames) {
  EXPECT_EQ(errorOf("0 0 * foo *"), "month \"foo\" is not a number 1-12 or a name jan-dec");
  EXPECT_EQ(errorOf("0 0 * * funday"),
            "day-of-week \"funday\" is not a number 0-7 or a name sun-sat");
  EXPECT_EQ(errorOf("0 0 * * monday"),
            "day-of-week \"monday\" is not a number 0-7 or a name sun-sat");
  EXPECT_EQ(errorOf("mon * * * *"), "minute \"mon\" is not a number 0-59");
  EXPECT_EQ(errorOf("0 0 jan * *"), "day-of-month \"jan\" is not a number 1-31");
}

TEST(CronExpression, RejectsEmptyListElements) {
  EXPECT_EQ(errorOf("1,,2 * * * *"), "minute \"1,,2\" has an empty list element");
  EXPECT_EQ(errorOf("0 ,3 * * *"), "hour \",3\" has an empty list element");
  EXPECT_EQ(errorOf("0 0 1, * *"), "day-of-month \"1,\" has an empty list element");
}

TEST(CronExpression, RejectsJunk) {
  EXPECT_EQ(errorOf("a b c d e"), "minute \"a\" is not a number 0-59");
  EXPECT_EQ(errorOf("1-2-3 * * * *"), "minute \"2-3\" is not a number 0-59");
  EXPECT_EQ(errorOf("0 0 ? * *"), "day-of-month \"?\" is not a number 1-31");
  EXPECT_EQ(errorOf("0 0 L * *"), "day-of-month \"L\" is not a number 1-31");
  EXPECT_EQ(errorOf("+5 * * * *"), "minute \"+5\" is not a number 0-59");
  EXPECT_EQ(errorOf("** * * * *"), "minute \"**\" is not a number 0-59");
  EXPECT_EQ(errorOf("0 0 * * 1#2"), "day-of-week \"1#2\" is not a number 0-7 or a name sun-sat");
}

TEST(CronExpression, RejectsUnknownOrDecoratedMacros) {
  EXPECT_EQ(errorOf("@reboot"),
            "unknown macro \"@reboot\"; expected @yearly, @annually, @monthly, @weekly, @daily, "
            "@midnight or @hourly");
  EXPECT_EQ(errorOf("@daily 5"), "macro \"@daily\" must stand alone, got 2 fields");
}

}  // namespace
}  // namespace relay::schedule
