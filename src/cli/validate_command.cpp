#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

#include "app/app_loader.h"
#include "app/apps_root.h"
#include "cli/app_flags.h"
#include "cli/command.h"
#include "common/printable.h"

namespace relay::cli {
namespace {

struct ValidateOptions {
  AppFlags flags;
  std::string app_dir;
};

std::string counted(std::size_t count, const std::string& noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

// The directory's own name, also for `.`, `..` and a trailing slash.
std::string dirName(const std::filesystem::path& dir) {
  std::error_code ec;
  const std::filesystem::path canonical = std::filesystem::canonical(dir, ec);
  if (!ec) return canonical.filename().string();
  const std::filesystem::path normal = dir.lexically_normal();
  return normal.has_filename() ? normal.filename().string()
                               : normal.parent_path().filename().string();
}

bool holdsTemplate(const std::filesystem::path& dir) {
  std::error_code ec;
  return std::filesystem::exists(std::filesystem::symlink_status(dir / app::kTemplateFileName, ec));
}

void runValidate(const ValidateOptions& options, CommandContext& context) {
  if (!runtimeConfig(options.flags, "validate", context)) return;
  if (!options.app_dir.empty() && !options.flags.apps.empty()) {
    context.err << "relay validate: give either --apps DIR or APP_DIR, not both\n";
    context.exit_code = kExitUsage;
    return;
  }
  std::optional<std::filesystem::path> root = std::filesystem::path(options.app_dir);
  if (options.app_dir.empty()) root = appsRoot(options.flags, "validate", context);
  if (!root) return;
  const std::filesystem::path target = std::move(*root);
  std::vector<app::AppDir> apps;
  std::vector<app::IgnoredDir> ignored;
  std::error_code ec;
  if (!options.app_dir.empty() && !std::filesystem::exists(target, ec)) {
    context.err << "relay validate: " << target.string() << " does not exist\n";
    context.exit_code = kExitUsage;
    return;
  }
  if (!options.app_dir.empty() && holdsTemplate(target)) {
    apps.push_back({dirName(target), target});
  } else {
    auto listing = app::listAppsRoot(target);
    if (!listing) {
      context.err << "relay validate: " << listing.error().message << "\n";
      context.exit_code = kExitUsage;
      return;
    }
    apps = std::move(listing->apps);
    ignored = std::move(listing->ignored);
    if (options.app_dir.empty() && holdsTemplate(target)) {
      context.err << "note: " << target.string()
                  << " holds a template.yaml itself; with --apps it is read as an apps root "
                     "(pass it as APP_DIR to validate it as one app)\n";
    }
  }
  for (const app::IgnoredDir& dir : ignored) {
    context.err << "note: " << printable(dir.dir.string())
                << " is not an app: " << printable(dir.reason) << "\n";
  }
  std::size_t errors = 0, invalid_apps = 0, rules = 0, schedules = 0;
  std::string names;
  for (const app::AppDir& dir : apps) {
    const app::LoadResult result = app::loadApp(dir.name, dir.dir);
    for (const app::Diagnostic& diagnostic : result.errors) {
      context.err << printable(diagnostic.toString()) << "\n";
    }
    errors += result.errors.size();
    if (!result.ok()) {
      ++invalid_apps;
      continue;
    }
    rules += result.app->rules.size();
    schedules += result.app->schedules.size();
    names += (names.empty() ? "" : ", ") + dir.name;
  }
  if (invalid_apps > 0) {
    context.err << "relay validate: " << counted(errors, "error") << " in " << invalid_apps
                << " of " << counted(apps.size(), "app") << "\n";
    context.exit_code = kExitUsage;
    return;
  }
  if (apps.empty()) {
    context.out << "0 apps: no directory in " << target.string() << " holds a template.yaml\n";
    return;
  }
  context.out << counted(apps.size(), "app") << " valid: " << printable(names) << " ("
              << counted(rules, "rule") << ", " << counted(schedules, "schedule") << ")\n";
}

}  // namespace

void addValidateCommand(CLI::App& root, CommandContext& context) {
  auto options = std::make_shared<ValidateOptions>();
  CLI::App* command = root.add_subcommand(
      "validate",
      "Check every template.yaml of an apps root (or one app directory); print each problem as "
      "file:line:col: message");
  addAppFlags(*command, options->flags);
  command
      ->add_option("APP_DIR", options->app_dir,
                   "An app directory (holding template.yaml) or an apps root")
      ->type_name("DIR");
  command->callback([options, &context] { runValidate(*options, context); });
}

}  // namespace relay::cli
