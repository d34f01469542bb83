#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "invocation/keys.h"
#include "redis/connection.h"
#include "redis/script.h"

namespace relay::invocation {

/// What an operator does to a stuck pending message (`relay pending`, docs/cli.md).
enum class Resolution {
  kDeadLetter,   // a DLQ entry per invocation its plan still owes (kind `operator`), then the ACK
  kAcknowledge,  // the ACK alone: the operator knows the message is done
};

/// How resolve() landed for one message.
struct ResolveVerdict {
  enum class Kind {
    kResolved,    // acknowledged, its state retained (and, to dead-letter, the entries written)
    kNotPending,  // not in the group's PEL: nothing changed
    kHeld,        // a live claim holds one of its invocations: nothing changed (no `force`)
    kRetained,    // its state was retained already (it had finished): acknowledged, no entry
  };
  Kind kind = Kind::kNotPending;
  /// kResolved, to dead-letter: `<app>/<handler>` of each entry written (`-/-` for a message
  /// without a plan); empty when nothing was owed.
  std::vector<std::string> written;
  /// kHeld: the invocation, `running` or `claimed`, the message's owner and the claim's
  /// deadline (Unix ms, Redis time).
  std::string field;
  std::string claim;
  std::string owner;
  std::int64_t until_ms = 0;
};

/// Resolves one pending message in one script (docs/cli.md "relay pending"): refuses while a
/// live claim holds one of its invocations (unless forced: the handler keeps running and its
/// outcome finds the state retained and changes nothing); to dead-letter, writes one DLQ entry
/// per invocation that is not terminal (kind `operator`, the state it was in as the reason,
/// its exit reason and output tail when kept, marked `exhausted:<n>:operator:dlq`), or one `-`
/// entry for a message without a plan; then XACK, out of the due index and the paused queue,
/// and the state retained (`relay:retained` and REDIS_INVOCATION_RETENTION) in the same step,
/// with `relay:operator` saying what was done when. A DLQ that cannot be written changes
/// nothing but the entries already written (so a repeat writes only the others). Built on the
/// lifecycle's Lua library (lifecycle_lua_library.h). Stateless; the caller's connection.
class PendingResolver {
 public:
  PendingResolver(StreamKeys keys, std::chrono::milliseconds retention);

  /// `timestamp` (RFC 3339) stamps the DLQ entries and `relay:operator`.
  redis::Result<ResolveVerdict> resolve(redis::Connection& redis, std::string_view id,
                                        Resolution resolution, bool force,
                                        std::string_view timestamp) const;

 private:
  StreamKeys keys_;
  std::chrono::milliseconds retention_;
  redis::Script script_;
};

}  // namespace relay::invocation
