#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "common/result.h"

namespace relay::app {

/// A directory directly under the apps root that holds template.yaml.
struct AppDir {
  std::string name;  // the directory name; may still be an invalid app name (loadApp reports it)
  std::filesystem::path dir;
};

/// A directory under the apps root that is not an app, and why (shown by `relay validate` and
/// `relay app ls` so a misnamed template does not go unnoticed).
struct IgnoredDir {
  std::filesystem::path dir;
  std::string reason;
};

/// What is under an apps root.
struct AppsRootListing {
  std::vector<AppDir> apps;         // sorted by name
  std::vector<IgnoredDir> ignored;  // sorted by name
};

/// What one name under the apps root is.
enum class RootEntryKind {
  kApp,      // a directory holding template.yaml
  kIgnored,  // a directory without template.yaml
  kNone,     // absent, not a directory, or hidden (a name starting with '.')
};

struct RootEntry {
  RootEntryKind kind = RootEntryKind::kNone;
  std::string reason;  // for kIgnored
};

/// Classifies root/name. Symlinked directories count as directories.
RootEntry inspectRootEntry(const std::filesystem::path& root, const std::string& name);

/// Lists the apps root. Fails (kNotFound, kInvalidArgument, kIo) only when the root itself
/// cannot be listed; entries are classified with inspectRootEntry().
Result<AppsRootListing> listAppsRoot(const std::filesystem::path& root);

}  // namespace relay::app
