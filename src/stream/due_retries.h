#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "invocation/keys.h"
#include "redis/connection.h"
#include "redis/script.h"
#include "stream/stream_entry.h"

namespace relay::stream {

/// Polls the due-retry index (`relay:<stream>:due:<group>`, kept by the lifecycle scripts; see
/// docs/pipeline.md "Retries") so a retry runs when its backoff ends, not at the next reclaim
/// sweep. One script per poll: the ids whose next attempt is due by Redis's clock, each taken
/// over (XCLAIM) when it has idled at least `min_idle` in the PEL (a live delivery refreshes its
/// idle time) and pushed back by `lease` in the index so another replica does not take it too.
/// Entries whose body is gone are left to the reclaim sweep (missing payload). Stateless.
class DueRetries {
 public:
  struct Settings {
    std::chrono::milliseconds min_idle{20'000};
    std::chrono::milliseconds lease{30'000};
  };

  DueRetries(invocation::StreamKeys keys, std::string consumer, Settings settings);

  /// At most `count` due messages, taken over by this consumer.
  redis::Result<std::vector<StreamEntry>> take(redis::Connection& redis, int count) const;

 private:
  invocation::StreamKeys keys_;
  std::string consumer_;
  Settings settings_;
  redis::Script script_;
};

}  // namespace relay::stream
