#pragma once

#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace relay::bench {

/// `relay start` run by the benchmark as a user would run it: its own environment, its log in a
/// file the benchmark reads for the handler's `relay-stamp` lines, its memory and CPU read from
/// /proc. Stopped with SIGTERM (then SIGKILL) and reaped on destruction.
class WorkerProcess {
 public:
  struct Options {
    std::string relay;  // the binary
    std::filesystem::path apps;
    std::string runtime;
    std::string redis_uri;
    std::string stream;
    std::string consumer = "bench";
    int max_concurrency = 16;
    std::filesystem::path log;
    std::filesystem::path image_cache;  // RELAY_IMAGE_CACHE when set
    std::string sandbox_launcher;       // RELAY_SANDBOX_LAUNCHER when set
  };

  static std::unique_ptr<WorkerProcess> start(const Options& options);
  ~WorkerProcess();
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  pid_t pid() const { return pid_; }
  bool running() const;
  /// VmRSS and VmHWM (peak) of the worker, in KiB; -1 when unreadable.
  long rssKib() const;
  long peakRssKib() const;
  /// CPU time of the worker itself (user + system) and of its reaped children, in seconds.
  struct Cpu {
    double self = 0;
    double children = 0;
  };
  Cpu cpu() const;
  /// New `relay-stamp <id> <ns>` lines of the log since the last call, by message id.
  std::map<std::string, long long> takeStamps();
  /// The last `bytes` of the log, for error messages.
  std::string logTail(std::size_t bytes = 2000) const;

 private:
  WorkerProcess() = default;

  pid_t pid_ = -1;
  std::filesystem::path log_;
  std::size_t log_offset_ = 0;
  std::string partial_;  // a log line not yet complete
};

/// Reads /proc/<pid>/status field `name` (VmRSS, VmHWM) in KiB; -1 when absent.
long procStatusKib(pid_t pid, const std::string& name);

}  // namespace relay::bench
