#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "invocation/keys.h"
#include "redis/connection.h"
#include "redis/script.h"
#include "stream/stream_entry.h"

namespace relay::stream {

/// One poll of the due-retry index.
struct DueBatch {
  /// `entries`: taken over by this consumer; `deleted`: due ids whose stream entry is gone.
  AutoClaimPage page;
  /// How long until the index's first id is due (by Redis's clock); nullopt when it is empty.
  /// A throttle's reserved turns are due within its period: the poller sleeps this long, not a
  /// whole poll interval (docs/pipeline.md "Flow control").
  std::optional<std::chrono::milliseconds> next_in;
};

/// Polls the due-retry index (`relay:<stream>:due:<group>`, kept by the lifecycle scripts; see
/// docs/pipeline.md "Retries", "Waiting") so a parked message runs when it is due: a retry when
/// its backoff ends, a paused app's message once resumed, one no worker could run a minute
/// later. One script per poll: the ids due by Redis's clock, each taken over (XCLAIM) from the
/// parking consumer at once, or from a worker once it has idled at least `min_idle` in the PEL
/// (a live delivery refreshes its idle time), and pushed back by `lease` in the index so another
/// replica does not take it too. Ids whose body is gone come back apart (missing payloads).
/// Stateless.
class DueRetries {
 public:
  struct Settings {
    std::chrono::milliseconds min_idle{20'000};
    std::chrono::milliseconds lease{30'000};
  };

  /// `limits`: what a taken entry may bring into memory (ConsumerSettings::entry_limits).
  DueRetries(invocation::StreamKeys keys, std::string consumer, Settings settings,
             redis::ReplyLimits limits = {});

  /// At most `count` due messages, taken over by this consumer, the due ids whose stream entry
  /// is gone, and when the next one is due.
  redis::Result<DueBatch> take(redis::Connection& redis, int count) const;

 private:
  invocation::StreamKeys keys_;
  std::string consumer_;
  Settings settings_;
  redis::ReplyLimits limits_;
  redis::Script script_;
};

}  // namespace relay::stream
