#pragma once

#include <set>
#include <string>
#include <string_view>

#include "invocation/keys.h"
#include "redis/connection.h"

namespace relay::invocation {

// The apps paused cluster-wide (`relay app pause`, docs/cli.md "Pausing an app"): a Redis set
// of app names per group at StreamKeys::paused(), `relay:<stream>:paused:<group>` (and the
// stream-wide set of earlier Relays, still honoured). These functions are the one place that
// reads and writes it: the start script checks it, the worker polls it, `relay app
// pause/resume/ls` and the console change and show it.

/// The reason a paused app is unavailable (`relay app ls`, logs, the console).
inline constexpr std::string_view kPausedReason = "paused";

/// Every paused app name (SMEMBERS).
redis::Result<std::set<std::string>> readPausedApps(redis::Connection& redis,
                                                    const StreamKeys& keys);

/// Pauses `app` (SADD); true when it was not paused before.
redis::Result<bool> pauseApp(redis::Connection& redis, const StreamKeys& keys,
                             std::string_view app);

/// Resumes `app` (out of the group's and the legacy stream-wide set), and moves the messages
/// parked for it to the due index, due now (the due-retry pollers take them at their pace);
/// true when it was paused.
redis::Result<bool> resumeApp(redis::Connection& redis, const StreamKeys& keys,
                              std::string_view app);

}  // namespace relay::invocation
