#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "invocation/keys.h"
#include "observability/metrics.h"
#include "redis/connection.h"

namespace relay::stream {

/// One handler attempt as the journal keeps it.
struct AttemptRecord {
  std::string app;
  std::string handler;
  int attempt = 0;
  std::string consumer;          // the worker that ran it
  std::int64_t started_ms = 0;   // Unix ms, the worker's clock
  std::int64_t finished_ms = 0;  // 0 while running (or when the worker died mid-attempt)
  std::string outcome;           // succeeded | failed | not_run (the runtime could not start it)
  std::string reason;            // `exit 3`, `timeout 20s`, the runtime's error; empty on success
  std::int64_t duration_ms = 0;
};

/// Keeps every handler attempt of a message - who ran it, when, how it ended and how long it
/// took - in the hash `relay:<stream>:attempts:<group>:<message-id>`, one field per
/// `<app>/<handler>#<attempt>` (JSON), so `relay console` can show a message's history and what
/// runs where now (docs/console.md). Written next to the invocation state, never in its place:
/// a failed write counts a Redis error (op `journal`) and changes nothing else. The hash expires
/// `retention` after its last write (REDIS_INVOCATION_RETENTION; zero: kept). Thread-safe; each
/// call uses the caller's Connection.
class AttemptJournal {
 public:
  AttemptJournal(invocation::StreamKeys keys, std::string consumer,
                 std::chrono::milliseconds retention, observability::Metrics& metrics,
                 Clock& clock);

  /// Attempt `attempt` of `app`/`handler` of message `id` is starting on this worker.
  void started(redis::Connection& redis, std::string_view id, std::string_view app,
               std::string_view handler, int attempt);
  /// ... and ended: `outcome` is succeeded, failed or not_run.
  void finished(redis::Connection& redis, std::string_view id, std::string_view app,
                std::string_view handler, int attempt, std::string_view outcome,
                std::string_view reason, std::chrono::nanoseconds duration);

 private:
  void write(redis::Connection& redis, std::string_view id, const AttemptRecord& record);

  invocation::StreamKeys keys_;
  std::string consumer_;
  std::chrono::milliseconds retention_;
  observability::Metrics& metrics_;
  Clock& clock_;
};

/// The records of a journal hash (HGETALL's pairs), by app, handler, then attempt. Fields of
/// another shape are skipped.
std::vector<AttemptRecord> parseAttempts(
    const std::vector<std::pair<std::string, std::string>>& hash);

}  // namespace relay::stream
