#pragma once

#include <cstddef>
#include <vector>

#include "common/clock.h"
#include "schedule/cron.h"
#include "schedule/time_zone.h"

namespace relay::schedule {

/// The fire times `t` with `from <= t <= to`, in order, exactly the instants the publisher
/// publishes (nextFireTime's rules: a skipped local time does not fire, a repeated one fires on
/// its first pass), at most `limit` of them: what a backfill of that window covers
/// (docs/schedules.md "Backfill"). Empty when `from > to`. Pure.
std::vector<WallTime> fireTimesWithin(const CronExpression& cron, const TimeZone& zone,
                                      WallTime from, WallTime to, std::size_t limit);

}  // namespace relay::schedule
