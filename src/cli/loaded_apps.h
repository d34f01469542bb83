#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "app/registry.h"
#include "cli/app_flags.h"
#include "cli/command.h"
#include "common/clock.h"
#include "runtime/runtime.h"

namespace relay::cli {

/// The apps of --apps/RELAY_APPS with the runtime of --runtime/RELAY_RUNTIME, whose verdict is
/// part of each app's availability: what `app ls` and `app inspect` show and `app invoke` runs
/// handlers with.
struct LoadedApps {
  std::unique_ptr<runtime::Runtime> runtime;
  std::unique_ptr<app::Registry> registry;
};

/// Loads them; on failure writes `relay <command>: ...` to context.err, sets the exit code
/// (2 for a bad flag or variable, 1 otherwise) and returns nullopt.
std::optional<LoadedApps> loadApps(const AppFlags& flags, std::string_view command, Clock& clock,
                                   CommandContext& context);

/// The templates of an apps root alone, with no runtime verdict (for commands that run nothing:
/// backtest, pause). Fails when the root cannot be listed.
Result<std::shared_ptr<const app::Snapshot>> loadTemplates(const std::filesystem::path& root);

/// The apps paused on every worker of the stream (`relay app pause`), read from Redis with a
/// 2-second bound; nullopt, with a note on context.err, when Redis cannot tell (the commands
/// that show availability still work without Redis).
std::optional<std::set<std::string>> pausedApps(const AppFlags& flags, CommandContext& context);

/// An app's status as every worker sees it: a paused app is unavailable (reason `paused`)
/// whatever its runtime says; nullopt `paused` (unknown) leaves the status as loaded.
app::AppStatus clusterStatus(const app::AppEntry& entry,
                             const std::optional<std::set<std::string>>& paused);

/// The app `name` of `snapshot` with valid rules. Otherwise writes `relay <command>: ...` (no
/// such app, listing the apps there, exit 1; a directory that is not an app, exit 1; an app
/// whose template is invalid, with its errors, exit 2) and returns null.
const app::AppEntry* findLoadedApp(const app::Snapshot& snapshot, const std::string& name,
                                   std::string_view command, CommandContext& context);

/// Reads `--event JSON|@FILE`, or stdin when `value` is empty or `@-`. Fails with a message.
Result<std::string> readEventArgument(const std::string& value, std::istream& stdin_stream);

}  // namespace relay::cli
