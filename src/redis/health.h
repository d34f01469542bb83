#pragma once

#include <mutex>
#include <optional>
#include <string>

#include "redis/errors.h"

namespace relay::redis {

/// Why `error` means Redis cannot serve us now (unreachable, timed out, TLS or login refused,
/// NOAUTH, WRONGPASS, READONLY, LOADING, MASTERDOWN, CLUSTERDOWN, TRYAGAIN), for health
/// checks; nullopt for errors that are answers (NOGROUP, WRONGTYPE, NOSCRIPT...).
std::optional<std::string> unhealthyReason(const Error& error);

/// The outcome of the last Redis call of one loop (the consumer's reader), for /healthz.
/// Thread-safe.
class Health {
 public:
  /// Records a call that Redis answered.
  void healthy();
  /// Records a failed call: unhealthy when unhealthyReason() has a reason for it.
  void failed(const Error& error);
  /// Why Redis is unhealthy now; nullopt when the last call was answered. Unhealthy until the
  /// first call is recorded.
  std::optional<std::string> problem() const;

 private:
  mutable std::mutex mutex_;
  std::optional<std::string> problem_ = "not connected yet";
};

}  // namespace relay::redis
