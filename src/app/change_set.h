#pragma once

#include <set>
#include <string>

namespace relay::app {

/// Apps whose files changed, as the Watcher reports them and the Registry consumes them.
struct ChangeSet {
  std::set<std::string> apps;  // names under the apps root (added, changed or removed)
  bool rescan = false;         // events were lost or the root itself changed: re-read all

  bool empty() const { return apps.empty() && !rescan; }
};

}  // namespace relay::app
