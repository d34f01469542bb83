#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "app/app.h"
#include "app/apps_root.h"
#include "app/diagnostic.h"

namespace relay::app {

/// Loaded: the app's rules take part in matching (its template was valid at some point and its
/// directory is still there). Available: loaded, the current template valid, and the runtime
/// able to run it now. Matched messages of a loaded but unavailable app stay pending.
struct AppStatus {
  bool loaded = false;
  bool available = false;
  std::string reason;        // why not available; empty when available
  std::string image_digest;  // the image the runtime runs the app on, when it runs one
};

/// One app directory as the registry knows it.
struct AppEntry {
  std::string name;
  std::filesystem::path dir;
  std::shared_ptr<const App> app;            // the rules in effect: the last valid load, or null
  std::vector<Diagnostic> errors;            // problems of the current template; empty when valid
  std::optional<runtime::Language> runtime;  // declared runtime, even of an invalid template
  AppStatus status;
};

/// Every app of the apps root at one moment: immutable, so a reader holding it sees all apps as
/// of one reload, never some old and some new.
class Snapshot {
 public:
  Snapshot(std::filesystem::path root, std::vector<AppEntry> apps, std::vector<IgnoredDir> ignored,
           std::uint64_t generation);

  const std::filesystem::path& root() const { return root_; }
  /// Sorted by name (the dispatch order).
  const std::vector<AppEntry>& apps() const { return apps_; }
  const std::vector<IgnoredDir>& ignored() const { return ignored_; }
  /// Increases with every snapshot a registry publishes.
  std::uint64_t generation() const { return generation_; }

  const AppEntry* find(std::string_view name) const;
  /// The apps whose rules take part in matching, in name order.
  std::vector<std::shared_ptr<const App>> loadedApps() const;

 private:
  std::filesystem::path root_;
  std::vector<AppEntry> apps_;
  std::vector<IgnoredDir> ignored_;
  std::uint64_t generation_;
};

}  // namespace relay::app
