#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include <yaml-cpp/yaml.h>

#include "app/app.h"
#include "app/template_errors.h"

namespace relay::app {

/// What the schema check of one template produced.
struct ParsedTemplate {
  std::optional<App> app;                    // only when no problem was found
  std::optional<runtime::Language> runtime;  // the declared runtime, when it was readable
};

/// Checks a template document against docs/apps.md "Full reference" (every key, type, range,
/// uniqueness, pattern, cron, timezone, and that each handler's file exists in `dir` for the
/// runtime) and builds the App with defaults filled in. Every problem goes to `errors`; none stops
/// the check. Reads the file system (handler files, zoneinfo); never throws.
ParsedTemplate parseTemplate(const YAML::Node& root, const std::string& name,
                             const std::filesystem::path& dir, TemplateErrors& errors);

}  // namespace relay::app
