#pragma once

#include <optional>
#include <ostream>
#include <string_view>
#include <utility>

#include "common/result.h"

namespace CLI {
class App;
}

namespace relay::cli {

/// Exit codes of every command (docs/operations.md "Configuration").
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;  // the operation ran and failed (no match, not found...)
inline constexpr int kExitUsage = 2;   // usage or validation error

/// What a command reads and writes besides its flags; commands never touch std::cout directly,
/// so tests run them in-process and capture both streams.
struct CommandContext {
  std::ostream& out;
  std::ostream& err;
  int exit_code = kExitOk;
};

/// The value of a setting `loaded` read, or nullopt after writing `relay <command>: <why>` and
/// setting the usage exit code: how every command refuses a bad flag or variable.
template <typename T>
std::optional<T> settingOrUsageError(Result<T> loaded, std::string_view command,
                                     CommandContext& context) {
  if (loaded.ok()) return std::move(loaded).value();
  context.err << "relay " << command << ": " << loaded.error().message << "\n";
  context.exit_code = kExitUsage;
  return std::nullopt;
}

// One registration function per command group (one .cpp each).
void addVersionCommand(CLI::App& root, CommandContext& context);
void addValidateCommand(CLI::App& root, CommandContext& context);
void addAppCommand(CLI::App& root, CommandContext& context);
void addStartCommand(CLI::App& root, CommandContext& context);
/// `app invoke`: registered after addAppCommand(), under its `app` group.
void addInvokeCommand(CLI::App& root, CommandContext& context);
/// `app explain`: registered after addAppCommand(), under its `app` group.
void addExplainCommand(CLI::App& root, CommandContext& context);
/// `app pause`, `app resume`: registered after addAppCommand(), under its `app` group.
void addPauseCommand(CLI::App& root, CommandContext& context);
void addDlqCommand(CLI::App& root, CommandContext& context);
void addPendingCommand(CLI::App& root, CommandContext& context);
void addStatsCommand(CLI::App& root, CommandContext& context);
void addHealthCommand(CLI::App& root, CommandContext& context);
void addPatternCommand(CLI::App& root, CommandContext& context);
void addConsoleCommand(CLI::App& root, CommandContext& context);
void addPublishCommand(CLI::App& root, CommandContext& context);
void addBacktestCommand(CLI::App& root, CommandContext& context);
void addDoctorCommand(CLI::App& root, CommandContext& context);
void addScheduleCommand(CLI::App& root, CommandContext& context);
void addCancelCommand(CLI::App& root, CommandContext& context);
void addReplayCommand(CLI::App& root, CommandContext& context);

}  // namespace relay::cli
