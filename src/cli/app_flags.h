#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "cli/command.h"
#include "config/config.h"

namespace CLI {
class App;
}

namespace relay::cli {

/// The flags of every command that loads apps (docs/apps.md "Commands"): `--apps DIR` over
/// RELAY_APPS over /apps, and `--runtime R` over RELAY_RUNTIME over sandbox.
struct AppFlags {
  std::string apps;
  std::string runtime;
};

void addAppFlags(CLI::App& command, AppFlags& flags);

/// The apps root of --apps or RELAY_APPS or /apps, read as `relay start` reads it
/// (config::loadAppsRoot). On a bad value writes `relay <command>: ...` naming the variable,
/// sets the usage exit code and returns nullopt.
std::optional<std::filesystem::path> appsRoot(const AppFlags& flags, std::string_view command,
                                              CommandContext& context);

/// The backend of --runtime or RELAY_RUNTIME and DOCKER_HOST, read as `relay start` reads them
/// (config::loadRuntimeConfig). On a bad value writes `relay <command>: ...` naming the flag or
/// variable, sets the usage exit code and returns nullopt.
std::optional<config::RuntimeConfig> runtimeConfig(const AppFlags& flags, std::string_view command,
                                                   CommandContext& context);

}  // namespace relay::cli
