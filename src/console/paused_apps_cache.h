#pragma once

#include <mutex>
#include <set>
#include <string>
#include <string_view>

#include "console/connection_pool.h"
#include "invocation/keys.h"

namespace relay::console {

/// The cluster-wide paused set (`relay app pause`, docs/cli.md "Pausing an app") as the console
/// last read it: re-read with the apps, so that the Apps page shows a paused app unavailable
/// with the reason `paused`, as `relay app ls` does. Thread-safe.
class PausedAppsCache {
 public:
  PausedAppsCache(ConnectionPool& pool, invocation::StreamKeys keys);

  /// Re-reads the set (SMEMBERS). When Redis cannot answer the last set read is kept: the
  /// Apps page must still load. Blocks on Redis.
  void refresh();
  bool paused(std::string_view app) const;

 private:
  ConnectionPool& pool_;
  invocation::StreamKeys keys_;
  mutable std::mutex mutex_;
  std::set<std::string, std::less<>> paused_;
};

}  // namespace relay::console
