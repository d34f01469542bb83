#include "schedule/fire_window.h"

#include "schedule/next_fire.h"

namespace relay::schedule {

std::vector<WallTime> fireTimesWithin(const CronExpression& cron, const TimeZone& zone,
                                      WallTime from, WallTime to, std::size_t limit) {
  std::vector<WallTime> times;
  // nextFireTime is strictly after its argument: start just before `from` so that a fire time
  // at `from` itself is in the window.
  for (auto next = nextFireTime(cron, zone, from - std::chrono::nanoseconds(1));
       next && *next <= to && times.size() < limit; next = nextFireTime(cron, zone, *next)) {
    times.push_back(*next);
  }
  return times;
}

}  // namespace relay::schedule
