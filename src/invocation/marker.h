#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace relay::invocation {

/// One invocation's state as stored in its hash field (docs/pipeline.md "State in Redis"):
///   claimed:<attempt>:<token>:<deadline-ms>         attempt N claimed by `token`, its handler
///                                                   not started yet: never charged
///   running:<attempt>:<token>:<deadline-ms>         attempt N's handler started (charged)
///   failed:<attempt>:<next-attempt-at-ms>:<token>   attempt N failed; the next may start then
///   succeeded:<attempt>:<token>
///   exhausted:<attempt>:<token>                     every attempt failed; DLQ entry owed
///   exhausted:<attempt>:<token>:dlq                 ... and written
///   deferred:<attempt>:<next-attempt-at-ms>:<token> the handler asked to be run again later
///                                                   (retry-after): like failed, its attempt
///                                                   not charged (`attempt` counts the others)
///   deduplicated:0:<message-id>                     its dedupe key was seen first by that
///                                                   message: never run (terminal)
///   superseded:0:<message-id>                       a newer event of its debounce or singleton
///                                                   key replaced it before it ran (terminal)
///   expired:<attempt>[:<token>[:dlq]]               its deadline or start timeout passed
///                                                   before attempt N+1: DLQ entry owed (written)
///   cancelled:<attempt>:<token>                     cancelled (docs/pipeline.md "Cancellation"):
///                                                   terminal, no retry, no DLQ entry
///   cancelled:<attempt>:<token>:owed                ... with `--dead-letter`: its entry owed
///   cancelled:<attempt>:<token>:dlq                 ... and written
/// The token stays in every marker so a repeated call (its reply was lost) is recognised and
/// answered with the recorded verdict. A released claim leaves `failed:<N-1>:<at>:-`. Times are
/// Unix milliseconds of Redis's clock (TIME). The Lua scripts write these; the in-memory store
/// and the tools read and write them through this type. Markers of an older Relay (no token in
/// succeeded/failed) still parse.
struct Marker {
  enum class State {
    kClaimed,
    kRunning,
    kFailed,
    kSucceeded,
    kExhausted,
    kDeduplicated,
    kSuperseded,
    kExpired,
    kCancelled
  };
  State state = State::kRunning;
  int attempt = 0;
  std::string token;
  std::int64_t deadline_ms = 0;      // claimed, running: when the claim expires
  std::int64_t next_attempt_ms = 0;  // failed
  bool dlq_written = false;          // exhausted, expired, cancelled
  bool deferred = false;             // failed: a retry-after deferral (`deferred:`), uncharged
  bool dead_letter = false;          // cancelled: a DLQ entry was asked for (owed until written)
  std::string other;                 // deduplicated, superseded: the message that won

  /// Parses a stored marker; nullopt for anything malformed.
  static std::optional<Marker> parse(std::string_view text);
  std::string format() const;
  /// Claimed or running: a claim holds the invocation (live until deadline_ms).
  bool held() const { return state == State::kClaimed || state == State::kRunning; }
  /// Its DLQ entry is owed and not written yet: exhausted, expired, or cancelled with one asked.
  bool owesDlq() const {
    return !dlq_written && (state == State::kExhausted || state == State::kExpired ||
                            (state == State::kCancelled && dead_letter));
  }
  /// Nothing left to do: succeeded, cancelled, deduplicated, superseded, or dead-lettered with
  /// its entry written.
  bool terminal() const {
    return state == State::kSucceeded || (state == State::kCancelled && !owesDlq()) ||
           ((state == State::kExhausted || state == State::kExpired) && dlq_written) ||
           state == State::kDeduplicated || state == State::kSuperseded;
  }
};

}  // namespace relay::invocation
