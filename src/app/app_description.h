#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/snapshot.h"
#include "common/clock.h"

namespace relay::app {

/// One upcoming firing of a schedule: RFC 3339 UTC and the schedule's local time with offset.
struct FireTime {
  std::string utc;
  std::string local;
};

/// The next `count` firings of `schedule` after `now` (fewer when none within 5 years).
std::vector<FireTime> nextFires(const Schedule& schedule, WallTime now, std::size_t count = 3);

/// What `relay app ls --json` prints per app and `relay console` lists: name, dir, runtime,
/// rule and schedule counts, loaded, available, reason, errors.
nlohmann::ordered_json appSummaryJson(const AppEntry& entry);

/// What `relay app inspect --json` prints and `relay console` shows: the effective
/// configuration (defaults filled in), every rule with its pattern, every schedule with its next
/// fire times, status and errors. `entry.app` must be set (a template was valid once).
nlohmann::ordered_json appDetailJson(const AppEntry& entry, WallTime now);

}  // namespace relay::app
