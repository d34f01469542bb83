#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "console/console_state.h"
#include "stream/throughput_recorder.h"

namespace relay::console {

/// A consumer's health: `healthy` while its worker's heartbeat key exists (refreshed every 5 s,
/// gone 15 s after the worker stopped or lost Redis); without one, `silent` when it read within
/// the last 5 minutes (a worker that just stopped, or one too old to beat) and `gone` after
/// that (left in the group until XGROUP DELCONSUMER).
std::string_view consumerHealth(bool heartbeat, std::int64_t idle_ms);

/// The chart's data: `minutes` (Unix seconds of each minute, oldest first) and one series per
/// counter (`events:matched`, `invocations:failed`, ...) with a value per minute, 0 where
/// nothing was counted. Every series the page draws is present even when all zero.
Json throughputJson(const std::vector<stream::MinuteCounts>& history);

/// GET /api/overview?minutes=N (1..1440, default 180): the stream, the group (pending, lag,
/// the oldest pending message explained: its age, owner and why it waits), the pending entry
/// holding trimming back (`trim_held_back`, or null), the DLQ size, every consumer with its
/// idle time and health, and the per-minute throughput of the last N minutes, summed over every
/// worker.
http::HttpReply overview(ConsoleState& state, const http::HttpRequest& request);

}  // namespace relay::console
