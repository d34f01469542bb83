#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "cli/command.h"

namespace CLI {
class App;
}

namespace relay::cli {

/// The flags of every command that loads apps (relay.md section 7): `--apps DIR` over
/// RELAY_APPS over /apps, and `--runtime R` over RELAY_RUNTIME over sandbox.
struct AppFlags {
  std::string apps;
  std::string runtime;
};

void addAppFlags(CLI::App& command, AppFlags& flags);

/// The apps root the flags and the environment name.
std::filesystem::path appsRoot(const AppFlags& flags);

/// Whether the runtime named by --runtime or RELAY_RUNTIME is one Relay has; if not, writes
/// `relay <command>: ...` naming the flag or variable and sets the usage exit code.
bool checkRuntime(const AppFlags& flags, std::string_view command, CommandContext& context);

}  // namespace relay::cli
