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

/// One line per flow-control gate of a rule, for people (`relay app inspect`, `relay app
/// explain`): `throttle: 20 per 1s, burst 5`, `concurrency: 2 at a time per tenant_id`, ...
std::vector<std::string> describeFlow(const FlowRules& flow);
/// `20 per 1s, burst 5`.
std::string describeRate(const ThrottleRule& throttle);
/// The flow control of a rule (or, with only `throttle`, of an app) as JSON: one object per key
/// present, durations as text and in ms.
nlohmann::ordered_json flowJson(const FlowRules& flow);
nlohmann::ordered_json throttleJson(const ThrottleRule& throttle);

/// What `relay app ls --json` prints per app and `relay console` lists: name, dir, runtime,
/// rule and schedule counts, loaded, available, reason, errors.
nlohmann::ordered_json appSummaryJson(const AppEntry& entry);

/// What `relay app inspect --json` prints and `relay console` shows: the effective
/// configuration (defaults filled in), every rule with its pattern, every schedule with its next
/// fire times, status and errors. `entry.app` must be set (a template was valid once).
nlohmann::ordered_json appDetailJson(const AppEntry& entry, WallTime now);

}  // namespace relay::app
