#include "app/registry.h"

#include "app/app_loader.h"
#include "app/apps_root.h"

namespace relay::app {
namespace {

// The first error, relative to the app directory, for the one-line reason of `relay app ls`.
std::string summarizeErrors(const std::vector<Diagnostic>& errors) {
  const Diagnostic& first = errors.front();
  std::string text = std::string(kTemplateFileName) + ":" + std::to_string(first.line) + ":" +
                     std::to_string(first.column) + ": " + first.message;
  if (errors.size() > 1) {
    text += " (+" + std::to_string(errors.size() - 1) + " more error" +
            (errors.size() > 2 ? "s" : "") + ")";
  }
  return text;
}

std::map<std::string, AppEntry> entriesOf(const Snapshot& snapshot) {
  std::map<std::string, AppEntry> entries;
  for (const AppEntry& entry : snapshot.apps()) entries.emplace(entry.name, entry);
  return entries;
}

std::map<std::string, IgnoredDir> ignoredOf(const Snapshot& snapshot) {
  std::map<std::string, IgnoredDir> ignored;
  for (const IgnoredDir& dir : snapshot.ignored()) {
    ignored.emplace(dir.dir.filename().string(), dir);
  }
  return ignored;
}

}  // namespace

Result<std::unique_ptr<Registry>> Registry::create(RegistrySettings settings) {
  std::unique_ptr<Registry> registry(new Registry(std::move(settings)));
  ReloadReport report = registry->reloadAll();
  if (report.root_error) return *report.root_error;
  return registry;
}

std::shared_ptr<const Snapshot> Registry::snapshot() const {
  std::lock_guard lock(snapshot_mutex_);
  return snapshot_;
}

AppStatus Registry::statusOf(const AppEntry& entry) const {
  if (!entry.app) return {false, false, "invalid " + summarizeErrors(entry.errors), {}};
  if (!entry.errors.empty()) {
    return {true,
            false,
            "invalid " + summarizeErrors(entry.errors) + "; keeping the last valid rules",
            {}};
  }
  if (root_error_) return {true, false, *root_error_ + "; keeping the last rules", {}};
  if (!settings_.availability) return {true, true, "", {}};
  runtime::Availability availability = settings_.availability(*entry.app);
  return {true, availability.available,
          availability.available ? "" : std::move(availability.reason),
          std::move(availability.image_digest)};
}

AppEntry Registry::loadEntry(const std::string& name, const AppEntry* previous) const {
  LoadResult loaded = loadApp(name, settings_.apps_root / name);
  const bool valid = loaded.ok();
  AppEntry entry;
  entry.name = name;
  entry.dir = settings_.apps_root / name;
  entry.errors = std::move(loaded.errors);
  entry.app = valid ? std::move(loaded.app) : previous ? previous->app : nullptr;
  if (valid && settings_.keeper.keep) settings_.keeper.keep(name, loaded.text);
  if (!entry.app && settings_.keeper.recall) {
    // Invalid since this process started: the last valid template kept elsewhere, if any, so
    // the app's messages are matched (and wait, unavailable) rather than taken as unmatched.
    if (const std::optional<std::string> kept = settings_.keeper.recall(name)) {
      LoadResult recalled = loadAppText(name, entry.dir, *kept, "kept template of " + name);
      if (recalled.ok()) entry.app = std::move(recalled.app);
    }
  }
  entry.runtime = loaded.runtime;
  if (!entry.runtime && entry.app) entry.runtime = entry.app->runtime;
  entry.status = statusOf(entry);
  return entry;
}

void Registry::publish(const std::map<std::string, AppEntry>& apps,
                       const std::map<std::string, IgnoredDir>& ignored) {
  std::vector<AppEntry> app_list;
  app_list.reserve(apps.size());
  for (const auto& [name, entry] : apps) app_list.push_back(entry);
  std::vector<IgnoredDir> ignored_list;
  for (const auto& [name, dir] : ignored) ignored_list.push_back(dir);
  auto next = std::make_shared<const Snapshot>(settings_.apps_root, std::move(app_list),
                                               std::move(ignored_list), ++generation_);
  std::lock_guard lock(snapshot_mutex_);
  snapshot_ = std::move(next);
}

ReloadReport Registry::reload(const std::set<std::string>& names) {
  std::lock_guard writer(writer_mutex_);
  std::error_code ec;
  // Without a root every app would look removed; the full path keeps them, unavailable.
  if (!std::filesystem::is_directory(settings_.apps_root, ec)) return reloadAllLocked();
  const std::shared_ptr<const Snapshot> current = snapshot();
  std::map<std::string, AppEntry> apps = entriesOf(*current);
  std::map<std::string, IgnoredDir> ignored = ignoredOf(*current);
  ReloadReport report;
  for (const std::string& name : names) {
    const RootEntry kind = inspectRootEntry(settings_.apps_root, name);
    const auto previous = apps.find(name);
    if (kind.kind != RootEntryKind::kApp) {
      if (previous != apps.end()) {
        apps.erase(previous);
        report.removed.push_back(name);
      }
      if (kind.kind == RootEntryKind::kIgnored) {
        ignored.insert_or_assign(name, IgnoredDir{settings_.apps_root / name, kind.reason});
      } else {
        ignored.erase(name);
      }
      continue;
    }
    ignored.erase(name);
    AppEntry entry = loadEntry(name, previous == apps.end() ? nullptr : &previous->second);
    if (previous == apps.end()) {
      report.added.push_back(name);
    } else {
      (entry.errors.empty() ? report.updated : report.invalid).push_back(name);
    }
    if (previous == apps.end() && !entry.errors.empty()) report.invalid.push_back(name);
    apps.insert_or_assign(name, std::move(entry));
  }
  publish(apps, ignored);
  return report;
}

ReloadReport Registry::reloadAll() {
  std::lock_guard writer(writer_mutex_);
  return reloadAllLocked();
}

ReloadReport Registry::reloadAllLocked() {
  const std::shared_ptr<const Snapshot> current = snapshot();
  std::map<std::string, AppEntry> apps;
  if (current) apps = entriesOf(*current);
  ReloadReport report;
  Result<AppsRootListing> listing = listAppsRoot(settings_.apps_root);
  if (!listing) {
    // A vanished or unreadable root is far more often a mount problem than a wish to delete
    // every app: dropping them would turn matched events into unmatched (acknowledged) ones.
    root_error_ = listing.error().message;
    report.root_error = listing.error();
    for (auto& [name, entry] : apps) entry.status = statusOf(entry);
    publish(apps, current ? ignoredOf(*current) : std::map<std::string, IgnoredDir>());
    return report;
  }
  root_error_.reset();
  std::map<std::string, AppEntry> next;
  for (const AppDir& dir : listing->apps) {
    const auto previous = apps.find(dir.name);
    AppEntry entry = loadEntry(dir.name, previous == apps.end() ? nullptr : &previous->second);
    if (previous == apps.end()) {
      report.added.push_back(dir.name);
      if (!entry.errors.empty()) report.invalid.push_back(dir.name);
    } else {
      (entry.errors.empty() ? report.updated : report.invalid).push_back(dir.name);
    }
    next.emplace(dir.name, std::move(entry));
  }
  for (const auto& [name, entry] : apps) {
    if (!next.contains(name)) report.removed.push_back(name);
  }
  std::map<std::string, IgnoredDir> ignored;
  for (IgnoredDir& dir : listing->ignored) {
    ignored.emplace(dir.dir.filename().string(), std::move(dir));
  }
  publish(next, ignored);
  return report;
}

ReloadReport Registry::reloadChanged(const ChangeSet& changes) {
  if (changes.rescan) return reloadAll();
  return reload(changes.apps);
}

bool Registry::refreshAvailability() {
  std::lock_guard writer(writer_mutex_);
  const std::shared_ptr<const Snapshot> current = snapshot();
  std::map<std::string, AppEntry> apps = entriesOf(*current);
  bool changed = false;
  for (auto& [name, entry] : apps) {
    AppStatus status = statusOf(entry);
    if (status.loaded != entry.status.loaded || status.available != entry.status.available ||
        status.reason != entry.status.reason || status.image_digest != entry.status.image_digest) {
      entry.status = std::move(status);
      changed = true;
    }
  }
  if (changed) publish(apps, ignoredOf(*current));
  return changed;
}

}  // namespace relay::app
