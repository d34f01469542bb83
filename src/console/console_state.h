#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "console/apps_view.h"
#include "console/connection_pool.h"
#include "console/console_config.h"
#include "console/replay_jobs.h"
#include "dlq/dead_letter_queue.h"
#include "http/server.h"
#include "invocation/keys.h"
#include "redis/errors.h"

namespace relay::console {

/// What the console's JSON handlers work with; built once by Console and shared by every
/// request thread (each member is thread-safe).
struct ConsoleState {
  const ConsoleConfig& config;
  invocation::StreamKeys keys;
  ConnectionPool& pool;
  AppsView& apps;
  ReplayJobs* jobs;  // null in read-only mode
  Clock& clock;
};

using Json = nlohmann::ordered_json;

/// The dead-letter queue, read with the worker's MAX_EVENT_BYTES (docs/operations.md "Memory").
dlq::DeadLetterQueue deadLetters(const ConsoleState& state, redis::Connection& redis);

/// A 200 `application/json` reply (invalid UTF-8 replaced, so the page always parses it).
http::HttpReply jsonReply(const Json& body, int status = 200);
/// A 502 reply for a failed Redis call of `what`.
http::HttpReply redisFailure(std::string_view what, const redis::Error& error);
/// Unix milliseconds of `clock`'s wall time.
std::int64_t nowMs(const Clock& clock);
/// The `limit` query parameter: 1..max, `fallback` when absent; fails naming the range.
Result<std::size_t> limitParam(const http::HttpRequest& request, std::size_t fallback,
                               std::size_t max);
/// The first bytes of an event for a list row (the detail view shows all of it).
std::string eventPreview(std::string_view event);
/// An HGETALL reply as field/value pairs (an error or a non-string element reads as empty).
std::vector<std::pair<std::string, std::string>> hashPairs(
    const redis::Result<redis::Reply>& reply);

}  // namespace relay::console
