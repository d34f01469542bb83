#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "app/app.h"
#include "app/change_set.h"
#include "app/snapshot.h"
#include "common/result.h"

namespace relay::app {

/// The runtime's verdict on running an app now (handler files, image, sandbox). Asked for every
/// app whose template is valid, on each (re)load and refreshAvailability(). Called only from
/// the registry's writer side (one call at a time); may block briefly.
using AvailabilityCheck = std::function<runtime::Availability(const App&)>;

/// What a reload did, for logs and tests.
struct ReloadReport {
  std::vector<std::string> added;    // new app directories (valid or not)
  std::vector<std::string> updated;  // existing apps reloaded with a valid template
  std::vector<std::string> invalid;  // reloaded with problems (the last valid rules kept)
  std::vector<std::string> removed;  // directories (or their template.yaml) gone
  std::optional<Error> root_error;   // the apps root could not be listed (apps kept, unavailable)
};

/// Where an app's last valid template is kept beyond this process (Relay keeps it in Redis:
/// docs/apps.md "Loaded, available, and reloads"), so a worker started while a template is invalid
/// still has rules. Called from the registry's writer side only; may block briefly.
struct TemplateKeeper {
  /// A template that just loaded valid: keep it (replacing the previous one).
  std::function<void(const std::string& app, const std::string& text)> keep;
  /// The kept template of an app whose template is invalid and that has no valid load in this
  /// process; nullopt when none is kept (or it cannot be read now).
  std::function<std::optional<std::string>(const std::string& app)> recall;
};

struct RegistrySettings {
  std::filesystem::path apps_root;
  AvailabilityCheck availability;  // empty: every valid app is available
  TemplateKeeper keeper{};         // empty: only this process's loads count
};

/// Holds the apps of one apps root and publishes them as immutable snapshots. Readers call
/// snapshot() from any thread and keep what they got for as long as they need it; reloads
/// (serialized among themselves) build a whole new snapshot and swap it in at once.
class Registry {
 public:
  /// Lists the apps root and loads every app. Fails only when the root cannot be listed; invalid
  /// apps are entries with their errors.
  static Result<std::unique_ptr<Registry>> create(RegistrySettings settings);

  /// The current snapshot. Thread-safe; never blocks on a reload in progress for long (the
  /// swap is a pointer copy under a mutex).
  std::shared_ptr<const Snapshot> snapshot() const;

  /// Re-reads the named apps only (new, changed or removed directories) and publishes one new
  /// snapshot. A template that turned invalid keeps its app's last valid rules, unavailable.
  ReloadReport reload(const std::set<std::string>& names);
  /// Re-lists the root: adds, removes and reloads every app. If the root cannot be listed, the
  /// apps are kept but made unavailable until it can.
  ReloadReport reloadAll();
  /// reload() or, for a rescan, reloadAll(): what the Watcher's ChangeSet asks for.
  ReloadReport reloadChanged(const ChangeSet& changes);
  /// Asks the AvailabilityCheck again for every app (the runtime's state changed); publishes a
  /// new snapshot only if a status changed. Returns whether it did.
  bool refreshAvailability();

  const std::filesystem::path& root() const { return settings_.apps_root; }

 private:
  explicit Registry(RegistrySettings settings) : settings_(std::move(settings)) {}

  ReloadReport reloadAllLocked();  // requires writer_mutex_
  AppEntry loadEntry(const std::string& name, const AppEntry* previous) const;
  AppStatus statusOf(const AppEntry& entry) const;
  void publish(const std::map<std::string, AppEntry>& apps,
               const std::map<std::string, IgnoredDir>& ignored);

  RegistrySettings settings_;
  std::mutex writer_mutex_;                // serializes reloads
  std::optional<std::string> root_error_;  // guarded by writer_mutex_
  std::uint64_t generation_ = 0;           // guarded by writer_mutex_
  mutable std::mutex snapshot_mutex_;      // guards snapshot_ (the pointer only)
  std::shared_ptr<const Snapshot> snapshot_;
};

}  // namespace relay::app
