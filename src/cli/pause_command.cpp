// `relay app pause NAME` / `relay app resume NAME`: the cluster-wide paused set
// (invocation/paused_apps.h; docs/cli.md "Pausing an app").
#include <CLI/CLI.hpp>

#include <memory>

#include "app/names.h"
#include "cli/loaded_apps.h"
#include "cli/redis_session.h"
#include "cli/table.h"
#include "invocation/paused_apps.h"

namespace relay::cli {
namespace {

struct PauseOptions {
  AppFlags flags;
  std::string name;
};

// Whether `name` is an app of the apps root; if not, says so (exit 1) unless `allow_unknown`.
bool knownApp(const PauseOptions& options, std::string_view command, bool allow_unknown,
              CommandContext& context) {
  const std::optional<std::filesystem::path> root = appsRoot(options.flags, command, context);
  if (!root) return false;
  auto snapshot = loadTemplates(*root);
  if (!snapshot.ok()) {
    context.err << "relay " << command << ": " << snapshot.error().message << "\n";
    context.exit_code = kExitFailed;
    return false;
  }
  if ((*snapshot)->find(options.name) != nullptr || allow_unknown) return true;
  std::string known;
  for (const app::AppEntry& app : (*snapshot)->apps()) {
    known += (known.empty() ? "" : ", ") + app.name;
  }
  context.err << "relay " << command << ": no app named \"" << options.name << "\" in "
              << (*snapshot)->root().string() << " (apps: " << (known.empty() ? "none" : known)
              << "); nothing changed\n";
  context.exit_code = kExitFailed;
  return false;
}

void run(const PauseOptions& options, bool pause, CommandContext& context) {
  const std::string command = pause ? "app pause" : "app resume";
  if (!app::isValidName(options.name)) {
    context.err << "relay " << command << ": \"" << printable(options.name)
                << "\" is not an app name (" << app::kNamePattern << "); nothing changed\n";
    context.exit_code = kExitUsage;
    return;
  }
  auto config = loadCommandConfig(command, {options.flags.apps, options.flags.runtime}, context);
  if (!config) return;
  if (pause && !knownApp(options, command, false, context)) return;
  auto session = connectRedisSession(command, std::move(*config), context);
  if (!session) return;
  if (pause) {
    auto added = invocation::pauseApp(*session->redis, session->keys, options.name);
    if (!added.ok()) return reportRedisError(command, added.error(), context);
    context.out << (*added ? "paused " : "already paused: ") << options.name
                << " (no attempt of it starts on any worker from now on; its events wait, "
                   "schedules keep publishing)\n";
    return;
  }
  // A paused app whose directory is gone can still be resumed (cleans the set up).
  auto paused = invocation::readPausedApps(*session->redis, session->keys);
  if (!paused.ok()) return reportRedisError(command, paused.error(), context);
  if (!knownApp(options, command, paused->count(options.name) > 0, context)) return;
  auto removed = invocation::resumeApp(*session->redis, session->keys, options.name);
  if (!removed.ok()) return reportRedisError(command, removed.error(), context);
  context.out << (*removed ? "resumed " : "not paused: ") << options.name
              << (*removed ? " (its waiting events run within seconds)\n" : "\n");
}

void addVerb(CLI::App& group, bool pause, CommandContext& context) {
  auto options = std::make_shared<PauseOptions>();
  CLI::App* command = group.add_subcommand(
      pause ? "pause" : "resume",
      pause ? "Pause NAME on every worker: its matched events stay pending, no attempt is "
              "charged, schedules keep publishing"
            : "Resume NAME on every worker: its pending events run");
  command->add_option("NAME", options->name, "The app")->required();
  addAppFlags(*command, options->flags);
  command->callback([options, pause, &context] { run(*options, pause, context); });
}

}  // namespace

void addPauseCommand(CLI::App& root, CommandContext& context) {
  CLI::App* group = root.get_subcommand("app");
  addVerb(*group, true, context);
  addVerb(*group, false, context);
}

}  // namespace relay::cli
