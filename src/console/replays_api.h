#pragma once

#include "console/console_state.h"

namespace relay::console {

/// GET /api/replays: the group's replays, newest first (docs/replay.md "Following"), each as
/// `relay replay show --json` prints it; `running` counts those still publishing.
http::HttpReply replays(ConsoleState& state, const http::HttpRequest& request);

}  // namespace relay::console
