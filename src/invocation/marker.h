#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace relay::invocation {

/// One invocation's state as stored in its hash field (relay.md section 5):
///   running:<attempt>:<token>:<deadline-ms>    claimed by a worker executing attempt N
///   failed:<attempt>:<next-attempt-at-ms>      attempt N failed; the next may start then
///   succeeded:<attempt>
///   exhausted:<attempt>:<token>                the last attempt failed; DLQ entry owed
///   exhausted:<attempt>:<token>:dlq            ... and written
/// Times are Unix milliseconds. The Lua scripts write these; this type reads them.
struct Marker {
  enum class State { kRunning, kFailed, kSucceeded, kExhausted };
  State state = State::kRunning;
  int attempt = 0;
  std::string token;                 // running, exhausted
  std::int64_t deadline_ms = 0;      // running: when the claim expires
  std::int64_t next_attempt_ms = 0;  // failed
  bool dlq_written = false;          // exhausted

  /// Parses a stored marker; nullopt for anything malformed.
  static std::optional<Marker> parse(std::string_view text);
  std::string format() const;
  /// Succeeded, or exhausted with its DLQ entry written: nothing left to do.
  bool terminal() const {
    return state == State::kSucceeded || (state == State::kExhausted && dlq_written);
  }
};

}  // namespace relay::invocation
