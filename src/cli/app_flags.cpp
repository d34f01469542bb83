#include "cli/app_flags.h"

#include <CLI/CLI.hpp>

#include <array>
#include <cstdlib>

namespace relay::cli {
namespace {

constexpr std::array<std::string_view, 3> kRuntimes = {"sandbox", "docker", "process"};

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

bool checkRuntime(const AppFlags& flags, std::string_view command, CommandContext& context) {
  const bool from_flag = !flags.runtime.empty();
  const std::string runtime = from_flag ? flags.runtime : environment("RELAY_RUNTIME");
  if (runtime.empty()) return true;
  for (const std::string_view known : kRuntimes) {
    if (runtime == known) return true;
  }
  context.err << "relay " << command << ": invalid " << (from_flag ? "--runtime" : "RELAY_RUNTIME")
              << " \"" << runtime << "\" (expected sandbox, docker or process)\n";
  context.exit_code = kExitUsage;
  return false;
}

}  // namespace relay::cli
