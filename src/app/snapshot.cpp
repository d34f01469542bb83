#include "app/snapshot.h"

#include <algorithm>
#include <cassert>

namespace relay::app {

Snapshot::Snapshot(std::filesystem::path root, std::vector<AppEntry> apps,
                   std::vector<IgnoredDir> ignored, std::uint64_t generation)
    : root_(std::move(root)),
      apps_(std::move(apps)),
      ignored_(std::move(ignored)),
      generation_(generation) {
  assert(std::is_sorted(apps_.begin(), apps_.end(),
                        [](const AppEntry& a, const AppEntry& b) { return a.name < b.name; }) &&
         "the registry builds snapshots from name-ordered maps");
}

const AppEntry* Snapshot::find(std::string_view name) const {
  const auto it = std::lower_bound(
      apps_.begin(), apps_.end(), name,
      [](const AppEntry& entry, std::string_view key) { return entry.name < key; });
  return it != apps_.end() && it->name == name ? &*it : nullptr;
}

std::vector<std::shared_ptr<const App>> Snapshot::loadedApps() const {
  std::vector<std::shared_ptr<const App>> loaded;
  for (const AppEntry& entry : apps_) {
    if (entry.status.loaded) loaded.push_back(entry.app);
  }
  return loaded;
}

}  // namespace relay::app
