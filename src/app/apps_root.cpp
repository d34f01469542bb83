#include "app/apps_root.h"

#include <algorithm>

#include "app/app.h"

namespace relay::app {

RootEntry inspectRootEntry(const std::filesystem::path& root, const std::string& name) {
  if (name.empty() || name.front() == '.') return {};
  const std::filesystem::path dir = root / name;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return {};
  // symlink_status: a dangling template symlink still makes an app, whose load reports it.
  if (std::filesystem::exists(std::filesystem::symlink_status(dir / kTemplateFileName, ec))) {
    return {RootEntryKind::kApp, ""};
  }
  for (const char* near_miss : {"template.yml", "Template.yaml", "template.YAML"}) {
    if (std::filesystem::exists(dir / near_miss, ec)) {
      return {RootEntryKind::kIgnored,
              std::string("no template.yaml (found ") + near_miss + "; Relay reads template.yaml)"};
    }
  }
  return {RootEntryKind::kIgnored, "no template.yaml"};
}

Result<AppsRootListing> listAppsRoot(const std::filesystem::path& root) {
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(root, ec);
  if (!std::filesystem::exists(status)) {
    return Error::notFound("apps root " + root.string() + " does not exist");
  }
  if (!std::filesystem::is_directory(status)) {
    return Error::invalid("apps root " + root.string() + " is not a directory");
  }
  std::vector<std::string> names;
  std::filesystem::directory_iterator it(root, ec);
  for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  if (ec) return Error::io("cannot list apps root " + root.string() + ": " + ec.message());
  std::sort(names.begin(), names.end());
  AppsRootListing listing;
  for (const std::string& name : names) {
    const RootEntry entry = inspectRootEntry(root, name);
    if (entry.kind == RootEntryKind::kApp) listing.apps.push_back({name, root / name});
    if (entry.kind == RootEntryKind::kIgnored)
      listing.ignored.push_back({root / name, entry.reason});
  }
  return listing;
}

}  // namespace relay::app
