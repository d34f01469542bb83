#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "common/clock.h"
#include "schedule/cron.h"
#include "schedule/time_zone.h"

namespace relay::schedule {

/// The first fire time strictly after `after`: a UTC instant at a whole local minute (a whole
/// UTC minute too for every offset in use since 1972), or nullopt if there is none within 5
/// years (e.g. "0 0 30 2 *"). The cron is read on the zone's wall clock: a local time that the
/// clocks skip does not fire, one they pass twice fires once, at its first occurrence. Pure.
std::optional<WallTime> nextFireTime(const CronExpression& cron, const TimeZone& zone,
                                     WallTime after);

/// Whether `at` is a real firing of the schedule: exactly the instant nextFireTime yields for
/// that minute (so false for a non-whole minute, and for the second pass of a repeated hour).
bool isFireTime(const CronExpression& cron, const TimeZone& zone, WallTime at);

/// Up to `count` successive fire times after `after` (fewer when the 5-year horizon of a later
/// search runs out).
std::vector<WallTime> nextFireTimes(const CronExpression& cron, const TimeZone& zone,
                                    WallTime after, std::size_t count);

}  // namespace relay::schedule
