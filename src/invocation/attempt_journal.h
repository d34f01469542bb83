#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace relay::invocation {

/// One handler attempt as the attempt journal keeps it: the hash
/// `relay:<stream>:attempts:<group>:<message-id>`, one field per `<app>/<handler>#<attempt>`
/// (JSON), so `relay console` can show a message's history and what runs where now
/// (docs/console.md). The record of an attempt is written by the LifecycleStore call that claims
/// it (start) and replaced by the one that records its outcome (complete; journal alone when the
/// runtime could not start it), in the same step, next to the invocation state and never in its
/// place.
struct AttemptRecord {
  std::string app;
  std::string handler;
  int attempt = 0;
  std::string consumer;  // the worker that ran it
  /// Unix ms, the worker's clock: when it claimed the attempt; once it ended, finished_ms -
  /// duration_ms (when it ran at all).
  std::int64_t started_ms = 0;
  std::int64_t finished_ms = 0;  // 0 while running (or when the worker died mid-attempt)
  std::string outcome;           // succeeded | failed | not_run (the runtime could not start it)
  std::string reason;            // `exit 3`, `timeout 20s`, the runtime's error; empty on success
  std::int64_t duration_ms = 0;
};

/// The journal field of a record: `<app>/<handler>#<attempt>`.
std::string attemptField(const AttemptRecord& record);
/// The journal value of a record (JSON; the outcome fields only once it finished).
std::string encodeAttempt(const AttemptRecord& record);

/// The records of a journal hash (HGETALL's pairs), by app, handler, then attempt. Fields of
/// another shape are skipped.
std::vector<AttemptRecord> parseAttempts(
    const std::vector<std::pair<std::string, std::string>>& hash);

}  // namespace relay::invocation
