#pragma once

#include <chrono>
#include <memory>

#include "redis/connection.h"
#include "redis/connection_settings.h"
#include "redis/endpoint.h"
#include "redis/errors.h"

namespace relay::redis {

/// The wait between attempts to reach Redis: `first`, doubled after every failed attempt up to
/// `cap`, and `first` again after a success. Only arithmetic: the caller sleeps on its own
/// Clock or StopSignal, so a stop still interrupts the wait.
class Backoff {
 public:
  explicit Backoff(std::chrono::milliseconds first,
                   std::chrono::milliseconds cap = std::chrono::milliseconds::max());

  /// The wait before the next attempt.
  std::chrono::milliseconds wait() const { return wait_; }
  /// The wait to sleep now; the one after it is twice as long (at most the cap).
  std::chrono::milliseconds next();
  /// After a success: the next failure waits `first` again.
  void reset() { wait_ = first_; }

 private:
  std::chrono::milliseconds first_;
  std::chrono::milliseconds cap_;
  std::chrono::milliseconds wait_;
};

/// Keeps `connection` when it is usable, else replaces it with a new connection to `endpoint`
/// (a broken connection is never repaired in place: a new one finds the current master). On
/// failure `connection` is left as it was (null or broken) and the error is returned. Blocks
/// while connecting.
Status reconnect(std::unique_ptr<Connection>& connection, const Endpoint& endpoint,
                 const ConnectionSettings& settings = {});

}  // namespace relay::redis
