#include "schedule/next_fire.h"

namespace relay::schedule {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

constexpr int kHorizonYears = 5;

/// The last local day searched: the same calendar day five years on (Feb 29 -> Feb 28).
date::local_days horizonFrom(date::local_days start) {
  const date::year_month_day target = date::year_month_day{start} + date::years(kHorizonYears);
  if (target.ok()) return date::local_days{target};
  return date::local_days{target.year() / target.month() / date::last};
}

/// The latest whole second a WallTime (nanoseconds since 1970 in 64 bits, up to 2262) holds.
date::sys_seconds latestWallSecond() { return date::floor<seconds>(WallTime::max()); }

std::optional<date::sys_seconds> nextFireSecond(const CronExpression& cron, const TimeZone& zone,
                                                date::sys_seconds after) {
  // Walk the local calendar from the wall-clock minute of `after`, skipping whole months and
  // days that cannot match and visiting only the allowed hours and minutes of the others.
  // Mapping each candidate to its earliest instant keeps the order: for existing local times
  // that mapping is increasing, so the first candidate later than `after` is the answer.
  const auto start = date::floor<minutes>(zone.toLocal(after));
  const auto first_day = date::floor<date::days>(start);
  const date::hh_mm_ss<minutes> start_time{start - first_day};
  const date::local_days last_day = horizonFrom(first_day);

  for (date::local_days day = first_day; day <= last_day;) {
    const date::year_month_day ymd{day};
    if (!cron.matchesMonth(static_cast<unsigned>(ymd.month()))) {
      day = date::local_days{(date::year_month{ymd.year(), ymd.month()} + date::months(1)) / 1};
      continue;
    }
    if (cron.matchesDay(static_cast<unsigned>(ymd.day()), date::weekday{day}.c_encoding())) {
      const bool first = day == first_day;
      const auto from_hour = first ? static_cast<unsigned>(start_time.hours().count()) : 0U;
      for (auto hour = cron.nextHour(from_hour); hour; hour = cron.nextHour(*hour + 1)) {
        const unsigned from_minute = (first && *hour == from_hour)
                                         ? static_cast<unsigned>(start_time.minutes().count())
                                         : 0U;
        for (auto minute = cron.nextMinute(from_minute); minute;
             minute = cron.nextMinute(*minute + 1)) {
          const date::local_seconds local = day + hours(*hour) + minutes(*minute);
          const auto instant = zone.firstInstantOf(local);  // nullopt: skipped by the clocks
          if (instant && *instant > after) return instant;
        }
      }
    }
    day += date::days(1);
  }
  return std::nullopt;
}

}  // namespace

std::optional<WallTime> nextFireTime(const CronExpression& cron, const TimeZone& zone,
                                     WallTime after) {
  // Fire times are whole seconds, so "later than `after`" equals "later than its second".
  const auto next = nextFireSecond(cron, zone, date::floor<seconds>(after));
  if (!next || *next > latestWallSecond()) return std::nullopt;
  return WallTime{*next};
}

bool isFireTime(const CronExpression& cron, const TimeZone& zone, WallTime at) {
  const auto second = date::floor<seconds>(at);
  if (second != at) return false;
  const date::local_seconds local = zone.toLocal(second);
  const auto minute = date::floor<minutes>(local);
  if (minute != local) return false;
  const auto day = date::floor<date::days>(minute);
  const date::year_month_day ymd{day};
  const date::hh_mm_ss<minutes> time{minute - day};
  const CivilMinute civil{
      .year = static_cast<int>(ymd.year()),
      .month = static_cast<unsigned>(ymd.month()),
      .day = static_cast<unsigned>(ymd.day()),
      .hour = static_cast<unsigned>(time.hours().count()),
      .minute = static_cast<unsigned>(time.minutes().count()),
      .weekday = date::weekday{day}.c_encoding(),
  };
  // A repeated local minute fires only on its first pass.
  return cron.matchesLocal(civil) && zone.firstInstantOf(local) == second;
}

std::vector<WallTime> nextFireTimes(const CronExpression& cron, const TimeZone& zone,
                                    WallTime after, std::size_t count) {
  std::vector<WallTime> times;
  while (times.size() < count) {
    const auto next = nextFireTime(cron, zone, times.empty() ? after : times.back());
    if (!next) break;
    times.push_back(*next);
  }
  return times;
}

}  // namespace relay::schedule
