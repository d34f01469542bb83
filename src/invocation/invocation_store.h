#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/random.h"
#include "invocation/dlq_entry.h"
#include "invocation/keys.h"
#include "invocation/scripts.h"
#include "redis/connection.h"
#include "redis/errors.h"

namespace relay::invocation {

/// What TryStart decided for one invocation of one delivery.
struct Claim {
  enum class Verdict {
    kRun,         // claimed: execute attempt `attempt` with `token`, then complete()
    kBusy,        // another worker holds a live claim (until `until_ms`)
    kWait,        // attempt `attempt` failed; the next may start at `until_ms`
    kSucceeded,   // terminal
    kExhausted,   // every attempt failed; a DLQ entry is owed (write_dlq with this field)
    kDlqWritten,  // terminal: exhausted and its entry written
    kRetained,    // the message already left the PEL: this delivery is stale, do nothing
  };
  Verdict verdict = Verdict::kBusy;
  int attempt = 0;
  std::string token;
  std::int64_t until_ms = 0;
};

/// How complete() / writeDlq() / release() landed.
enum class Transition {
  kSucceeded,
  kFailed,
  kExhausted,
  kReleased,
  kWritten,
  kExists,
  kStale,
  kRetained
};

/// The invocation state machine over Redis: every transition is one Lua script on the
/// per-message state hash. Stateless apart from the keys, clock and random source; safe to share
/// between threads (each call takes the caller's Connection, which is not).
class InvocationStore {
 public:
  InvocationStore(StreamKeys keys, Clock& clock, Random& random);

  /// Claims `field` of message `id` for one attempt lasting at most `claim_for` (timeout plus
  /// the kill grace and a margin): after that a reclaiming replica may assume the worker died.
  redis::Result<Claim> tryStart(redis::Connection& redis, std::string_view id,
                                std::string_view field, int max_attempts,
                                std::chrono::milliseconds claim_for);
  /// Records the outcome of the attempt claimed with `token`; a failure schedules the next
  /// attempt `retry_delay` from now, or exhausts the invocation after `max_attempts`.
  redis::Result<Transition> complete(redis::Connection& redis, std::string_view id,
                                     std::string_view field, std::string_view token, bool succeeded,
                                     std::chrono::milliseconds retry_delay, int max_attempts);
  /// Gives a claim back without counting its attempt (the runtime could not run it).
  redis::Result<Transition> release(redis::Connection& redis, std::string_view id,
                                    std::string_view field, std::string_view token);
  /// Writes the owed DLQ entry of an exhausted invocation (or of a malformed message, field
  /// `-/-`) and marks it written, atomically: kWritten, or kExists when a previous delivery
  /// already did.
  redis::Result<Transition> writeDlq(redis::Connection& redis, std::string_view id,
                                     std::string_view field, const DlqEntry& entry);
  /// XACKs the message and switches its state hash to terminal retention (`retention` TTL,
  /// zero: keep forever). Returns whether this call acknowledged it.
  redis::Result<bool> ackAndRetain(redis::Connection& redis, std::string_view id,
                                   std::chrono::milliseconds retention);

  const StreamKeys& keys() const { return keys_; }

 private:
  std::int64_t nowMs() const;

  StreamKeys keys_;
  Clock& clock_;
  Random& random_;
  Scripts scripts_;
};

}  // namespace relay::invocation
