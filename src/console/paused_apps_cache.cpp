#include "console/paused_apps_cache.h"

#include "invocation/paused_apps.h"

namespace relay::console {

PausedAppsCache::PausedAppsCache(ConnectionPool& pool, invocation::StreamKeys keys)
    : pool_(pool), keys_(std::move(keys)) {}

void PausedAppsCache::refresh() {
  auto lease = pool_.lease();
  if (!lease.ok()) return;
  auto read = invocation::readPausedApps(**lease, keys_);
  if (!read.ok()) return;
  std::lock_guard lock(mutex_);
  paused_ = std::set<std::string, std::less<>>(read->begin(), read->end());
}

bool PausedAppsCache::paused(std::string_view app) const {
  std::lock_guard lock(mutex_);
  return paused_.find(app) != paused_.end();
}

}  // namespace relay::console
