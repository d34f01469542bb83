#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "console/apps_view.h"
#include "console/connection_pool.h"

namespace relay::console {

/// Replays dead-letter entries for the console on one background thread, one entry after
/// another (each may run a handler for up to its timeout), so an HTTP request only starts a job
/// and the page polls its progress. Every replay is dlq::Replayer's. Thread-safe.
class ReplayJobs {
 public:
  /// Entries are read cut to `max_event_bytes` (MAX_EVENT_BYTES: docs/operations.md "Memory").
  ReplayJobs(ConnectionPool& pool, AppsView& apps, std::string dlq_key,
             std::size_t max_event_bytes);
  /// Finishes the entry being replayed, drops the queued rest, joins the thread.
  ~ReplayJobs();
  ReplayJobs(const ReplayJobs&) = delete;
  ReplayJobs& operator=(const ReplayJobs&) = delete;

  /// Queues a job replaying `ids` in order; returns its number.
  std::uint64_t start(std::vector<std::string> ids);
  /// The job's progress and per-entry results as JSON, or nullopt for an unknown number:
  /// {id, state (queued|running|done), total, done, succeeded, failed, refused, not_runnable,
  ///  results: [{id, verdict, message, output}]}.
  std::optional<nlohmann::ordered_json> status(std::uint64_t job) const;

 private:
  struct Result {
    std::string id;
    std::string verdict;
    std::string message;
    std::string output;  // the handler's output tail
  };
  struct Job {
    std::uint64_t number = 0;
    std::vector<std::string> ids;
    std::vector<Result> results;
    bool running = false;
  };
  void loop();
  Result replayOne(const std::string& id);

  ConnectionPool& pool_;
  AppsView& apps_;
  std::string dlq_key_;
  std::size_t max_event_bytes_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::uint64_t> queue_;
  std::map<std::uint64_t, Job> jobs_;  // the latest kKeptJobs
  std::uint64_t next_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace relay::console
