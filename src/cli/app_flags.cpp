#include "cli/app_flags.h"

#include <CLI/CLI.hpp>

namespace relay::cli {

void addAppFlags(CLI::App& command, AppFlags& flags) {
  command.add_option("--apps", flags.apps, "Apps root (default: $RELAY_APPS, else /apps)")
      ->type_name("DIR");
  command
      .add_option("--runtime", flags.runtime,
                  "Isolation backend: sandbox, docker or process (default: $RELAY_RUNTIME, else "
                  "sandbox)")
      ->type_name("R");
}

std::optional<std::filesystem::path> appsRoot(const AppFlags& flags, std::string_view command,
                                              CommandContext& context) {
  return settingOrUsageError(config::loadAppsRoot(config::processEnvironment(), flags.apps),
                             command, context);
}

std::optional<config::RuntimeConfig> runtimeConfig(const AppFlags& flags, std::string_view command,
                                                   CommandContext& context) {
  return settingOrUsageError(config::loadRuntimeConfig(config::processEnvironment(), flags.runtime),
                             command, context);
}

}  // namespace relay::cli
