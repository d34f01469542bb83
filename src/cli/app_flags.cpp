#include "cli/app_flags.h"

#include <CLI/CLI.hpp>

#include <cstdlib>

namespace relay::cli {
namespace {

// An empty variable counts as unset, like an unset one.
std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

}  // namespace

void addAppFlags(CLI::App& command, AppFlags& flags) {
  command.add_option("--apps", flags.apps, "Apps root (default: $RELAY_APPS, else /apps)")
      ->type_name("DIR");
  command
      .add_option("--runtime", flags.runtime,
                  "Isolation backend: sandbox, docker or process (default: $RELAY_RUNTIME, else "
                  "sandbox)")
      ->type_name("R");
}

std::filesystem::path appsRoot(const AppFlags& flags) {
  if (!flags.apps.empty()) return flags.apps;
  const std::string from_environment = environment("RELAY_APPS");
  return std::filesystem::path(from_environment.empty() ? "/apps" : from_environment);
}

std::optional<config::RuntimeConfig> runtimeConfig(const AppFlags& flags, std::string_view command,
                                                   CommandContext& context) {
  auto config = config::loadRuntimeConfig(config::processEnvironment(), flags.runtime);
  if (!config.ok()) {
    context.err << "relay " << command << ": " << config.error().message << "\n";
    context.exit_code = kExitUsage;
    return std::nullopt;
  }
  return std::move(config).value();
}

}  // namespace relay::cli
