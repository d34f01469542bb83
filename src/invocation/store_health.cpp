#include "invocation/store_health.h"

#include "common/rfc3339.h"

namespace relay::invocation {

void StoreHealth::succeeded(std::string_view op) {
  std::lock_guard lock(mutex_);
  if (const auto run = runs_.find(op); run != runs_.end()) runs_.erase(run);
}

void StoreHealth::failed(std::string_view op, const Error& error) {
  const WallTime now = clock_.now();
  std::lock_guard lock(mutex_);
  auto run = runs_.find(op);
  if (run == runs_.end()) run = runs_.emplace(std::string(op), Run{}).first;
  if (run->second.failures++ == 0) run->second.first = now;
  run->second.last = now;
  run->second.error = error.message;
}

std::optional<std::string> StoreHealth::problem() const {
  const WallTime now = clock_.now();
  std::lock_guard lock(mutex_);
  const std::pair<const std::string, Run>* worst = nullptr;
  for (const auto& entry : runs_) {
    const Run& run = entry.second;
    if (run.failures < settings_.threshold || now - run.last > settings_.window) continue;
    if (!worst || run.failures > worst->second.failures) worst = &entry;
  }
  if (!worst) return std::nullopt;
  const Run& run = worst->second;
  return "lifecycle store calls are failing: " + worst->first + " failed " +
         std::to_string(run.failures) + " times in a row since " + formatRfc3339Millis(run.first) +
         ", the last at " + formatRfc3339Millis(run.last) + ": " + run.error;
}

}  // namespace relay::invocation
