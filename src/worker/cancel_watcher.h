#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/clock.h"
#include "common/stop_signal.h"
#include "invocation/keys.h"
#include "invocation/running_attempts.h"
#include "observability/logger.h"
#include "observability/metrics.h"
#include "redis/connection.h"
#include "redis/endpoint.h"

namespace relay::worker {

/// How the cancels stream is read. Fixed internals: tests shorten them.
struct CancelSettings {
  /// One blocking read's wait (XREAD BLOCK): a stop that cannot interrupt the read waits at
  /// most this long. Far below the one second a cancel may take to reach its worker.
  std::chrono::milliseconds block{1'000};
  /// The wait before reconnecting after a failure, doubled up to `backoff_cap`.
  std::chrono::milliseconds backoff{100};
  std::chrono::milliseconds backoff_cap{5'000};
};

/// Follows `relay:<stream>:cancels:<group>` (docs/pipeline.md "Cancellation") on its own thread
/// and connection: every entry names a running attempt (message id, invocation field, claim
/// token) that `relay cancel` asked to stop; when it runs here, RunningAttempts signals its
/// runtime (SIGTERM to the handler's tree, SIGKILL after the grace). Every worker reads every
/// entry (no group): only the one running the attempt acts. Reads from the stream's end as it
/// was at the first read, then from the last entry seen, across reconnects, so an outage loses
/// no entry the stream still holds.
class CancelWatcher {
 public:
  CancelWatcher(CancelSettings settings, redis::Endpoint endpoint, invocation::StreamKeys keys,
                invocation::RunningAttempts& running, observability::Metrics& metrics,
                observability::Logger& logger, Clock& clock);
  /// Stops and joins the thread.
  ~CancelWatcher();
  CancelWatcher(const CancelWatcher&) = delete;
  CancelWatcher& operator=(const CancelWatcher&) = delete;

  /// Takes the stream's current end as the position to read from (best effort: without it
  /// the thread takes it at its first read), on the caller's connection. Call before start().
  redis::Status position(redis::Connection& redis);
  /// One read from the position (blocking at most `block`), applying what it brings; returns
  /// how many running attempts it stopped here.
  redis::Result<int> readOnce(redis::Connection& redis);
  /// Starts the reading thread. Call at most once.
  void start();
  /// Ends the thread (a blocked read at once) and joins it. Thread-safe, idempotent.
  void stop();

 private:
  void loop();

  CancelSettings settings_;
  redis::Endpoint endpoint_;
  invocation::StreamKeys keys_;
  invocation::RunningAttempts& running_;
  observability::Metrics& metrics_;
  observability::Logger& logger_;
  Clock& clock_;
  std::string cursor_;  // the last entry id seen; empty: not positioned yet
  StopSignal stopping_;
  std::mutex reading_mutex_;
  redis::Connection* reading_ = nullptr;  // the connection a blocking read waits on
  std::mutex thread_mutex_;
  std::thread thread_;
};

}  // namespace relay::worker
