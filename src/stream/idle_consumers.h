#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "common/result.h"
#include "invocation/keys.h"
#include "redis/connection.h"
#include "redis/script.h"

namespace relay::stream {

/// Removes the consumers a group accumulates as workers come and go under new names (pods,
/// restarted containers): one script reads XINFO CONSUMERS and runs XGROUP DELCONSUMER for
/// each consumer, other than `self` and the parking consumer (relay:parked), that has been idle
/// (Redis's own idle time: since its last read or claim) longer than `threshold` AND holds no
/// pending message, in the same atomic step, so no read can give it a message in between. A
/// consumer with pending messages is never deleted: DELCONSUMER would drop them from the PEL.
/// Stateless.
class IdleConsumers {
 public:
  struct Settings {
    /// Fixed internal: far above any live worker's idle time (it reads every 5 s, or holds
    /// pending messages while its hands are full).
    std::chrono::milliseconds threshold{std::chrono::hours(1)};
  };

  IdleConsumers(invocation::StreamKeys keys, std::string self, Settings settings);

  /// The names of the consumers deleted (none when the group does not exist).
  Result<std::vector<std::string>> deleteIdle(redis::Connection& redis) const;

 private:
  invocation::StreamKeys keys_;
  std::string self_;
  Settings settings_;
  redis::Script script_;
};

}  // namespace relay::stream
