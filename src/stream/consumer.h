#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "observability/logger.h"
#include "observability/metrics.h"
#include "redis/connection.h"
#include "redis/endpoint.h"
#include "redis/health.h"
#include "stream/dispatcher.h"
#include "stream/stream_entry.h"

namespace relay::stream {

/// Fixed internals of reading (relay.md section 1): tests shorten them through this struct;
/// the binary exposes none of them.
struct ConsumerSettings {
  std::string stream = "events";
  std::string group = "relay";
  std::string consumer;
  std::chrono::milliseconds block{5'000};  // XREADGROUP BLOCK
  int read_count = 10;                     // XREADGROUP COUNT
  int max_unfinished = 16;                 // read but unfinished messages (backpressure)
  std::chrono::milliseconds reclaim_interval{60'000};
  std::chrono::milliseconds min_pending_idle{60'000};  // XAUTOCLAIM min-idle-time
  std::chrono::milliseconds reconnect_min{100};
  std::chrono::milliseconds reconnect_max{5'000};
};

/// Reads the stream through the consumer group, hands each message to the Dispatcher on a pool
/// of threads (at most max_unfinished at once), and reclaims idle pending messages. One per
/// worker process.
class Consumer {
 public:
  Consumer(ConsumerSettings settings, redis::Endpoint endpoint, Dispatcher& dispatcher,
           observability::Metrics& metrics, observability::Logger& logger, Clock& clock);
  ~Consumer();

  /// XGROUP CREATE ... MKSTREAM at 0; an existing group (BUSYGROUP) is fine.
  redis::Result<void> ensureGroup(redis::Connection& redis);

  /// Runs the reader, the reclaimer and the message workers until stop(); then waits for the
  /// messages being processed (their running handlers finish, nothing new starts) and returns.
  /// Unstarted messages stay pending. Blocks.
  void run();
  /// Asks run() to stop. Thread-safe, non-blocking.
  void stop();

  /// One XREADGROUP round processed synchronously on the caller's connection: for tests and
  /// tools. Returns the number of messages read.
  redis::Result<int> readOnce(redis::Connection& redis);
  /// One XAUTOCLAIM sweep processed synchronously. Returns the number of messages reclaimed
  /// (missing payloads included).
  redis::Result<int> reclaimOnce(redis::Connection& redis);

  /// Asks the reclaimer to redrive this consumer's own pending messages now, instead of waiting
  /// for them to idle past min_pending_idle (an app was resumed: docs/cli.md "Pausing an app").
  /// Thread-safe, non-blocking.
  void redriveSoon();
  /// Processes this consumer's own pending messages that it is not processing already:
  /// XPENDING for this consumer, then XCLAIM of each at the idle time XPENDING showed, so that
  /// a replica that reclaimed the message in between keeps it. Synchronous; returns how many.
  redis::Result<int> redriveOnce(redis::Connection& redis);

  /// Why Redis could not serve the reader's last call (unreachable, NOAUTH, READONLY, LOADING,
  /// MASTERDOWN, CLUSTERDOWN...); nullopt when it answered. For /healthz.
  std::optional<std::string> redisProblem() const { return redis_health_.problem(); }
  bool stopping() const { return stopping_.load(); }

 private:
  redis::Result<std::vector<StreamEntry>> read(redis::Connection& redis, int count);
  void handle(redis::Connection& redis, const StreamEntry& entry);
  void clearMissing(redis::Connection& redis, const std::string& id);
  void readerLoop();
  void reclaimLoop();
  void workerLoop();
  void enqueue(std::vector<StreamEntry> entries);
  std::unique_ptr<redis::Connection> connect(std::unique_ptr<redis::Connection> old,
                                             std::chrono::milliseconds& backoff);
  void sleepUnlessStopping(std::chrono::milliseconds duration);

  ConsumerSettings settings_;
  redis::Endpoint endpoint_;
  Dispatcher& dispatcher_;
  observability::Metrics& metrics_;
  observability::Logger& logger_;
  Clock& clock_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> redrive_requested_{false};
  redis::Health redis_health_;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<StreamEntry> queue_;
  std::set<std::string> unfinished_;  // queued or being processed here
};

}  // namespace relay::stream
