#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/app.h"
#include "app/diagnostic.h"

namespace relay::app {

/// The outcome of loading one app directory.
struct LoadResult {
  std::shared_ptr<const App> app;            // null when the template has any problem
  std::vector<Diagnostic> errors;            // every problem, in position order
  std::optional<runtime::Language> runtime;  // the declared runtime when readable, even if invalid
  std::string text;                          // the template as read, when valid (to persist it)

  bool ok() const { return app != nullptr; }
};

/// Largest template.yaml read; anything bigger is certainly not a hand-written template.
inline constexpr std::uintmax_t kMaxTemplateBytes = 1 << 20;

/// Reads and validates `dir`/template.yaml for the app called `name` (the directory name):
/// the name's charset, a template symlink escaping the directory, unreadable or oversized files,
/// YAML syntax, duplicate keys and the whole schema (parseTemplate). Diagnostics name the
/// template by `dir`/template.yaml as given (not canonicalised), so they stay clickable.
/// Reads the file system; never throws.
LoadResult loadApp(const std::string& name, const std::filesystem::path& dir);

/// The same checks for template `text` kept elsewhere (the last valid template a worker
/// persisted, docs/apps.md "Loaded, available, and reloads"), against the app directory `dir` as it
/// is now (handler files must exist there). Diagnostics name `origin`.
LoadResult loadAppText(const std::string& name, const std::filesystem::path& dir,
                       const std::string& text, const std::string& origin);

}  // namespace relay::app
