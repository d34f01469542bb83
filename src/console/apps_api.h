#pragma once

#include <memory>

#include "app/snapshot.h"
#include "common/clock.h"
#include "console/console_state.h"

namespace relay::console {

/// Every app of `snapshot` for the Apps page: the summary (`relay app ls --json`) and, when a
/// template was ever valid, the detail (`relay app inspect --json`: rules with their patterns,
/// schedules with their next fire times); plus the directories that are not apps and why.
Json appsJson(const app::Snapshot& snapshot, WallTime now);

/// Which rules an event matches, for the Pattern playground: `{valid, error, matched: [...in
/// dispatch order], rules: [{app, handler, pattern, matched, available}]}`, using the worker's
/// classifier over `snapshot` (every loaded app, available or not) at `now`.
Json playgroundJson(const app::Snapshot& snapshot, std::string event, WallTime now);

/// GET /api/apps
http::HttpReply listApps(ConsoleState& state, const http::HttpRequest& request);
/// POST /api/playground {"event": "<json text>"}: changes nothing, so it needs no CSRF token.
http::HttpReply playground(ConsoleState& state, const http::HttpRequest& request);

}  // namespace relay::console
