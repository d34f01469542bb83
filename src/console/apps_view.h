#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>

#include "app/registry.h"
#include "common/clock.h"
#include "runtime/runtime.h"

namespace relay::console {

/// The apps root as the console shows it and replays against: a registry with the runtime's
/// availability verdict, re-read at most every `max_age` when someone asks (the console does
/// not watch the files; a page load sees changes within that). Thread-safe.
class AppsView {
 public:
  /// `before_reload` runs before each re-read (the console refreshes the paused set there).
  AppsView(std::unique_ptr<runtime::Runtime> runtime, std::unique_ptr<app::Registry> registry,
           Clock& clock, std::chrono::milliseconds max_age = std::chrono::seconds(2),
           std::function<void()> before_reload = {});

  /// The current snapshot, reloaded first when older than max_age. May block on the reload.
  std::shared_ptr<const app::Snapshot> snapshot();
  runtime::Runtime& runtime() { return *runtime_; }

 private:
  std::unique_ptr<runtime::Runtime> runtime_;
  std::unique_ptr<app::Registry> registry_;
  Clock& clock_;
  std::chrono::milliseconds max_age_;
  std::function<void()> before_reload_;
  std::mutex mutex_;
  MonoTime loaded_at_;
};

}  // namespace relay::console
