#include "cli/cli.h"

#include <CLI/CLI.hpp>

#include "cli/command.h"

namespace relay::cli {

int runCli(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App root{"Relay: runs the handlers of matching apps for the events of a Redis Stream.",
                "relay"};
  root.require_subcommand(1);
  root.fallthrough(false);
  CommandContext context{out, err};
  addVersionCommand(root, context);
  addValidateCommand(root, context);
  addAppCommand(root, context);
  addStartCommand(root, context);
  addInvokeCommand(root, context);
  addExplainCommand(root, context);
  addPauseCommand(root, context);
  addDlqCommand(root, context);
  addPendingCommand(root, context);
  addStatsCommand(root, context);
  addHealthCommand(root, context);
  addPatternCommand(root, context);
  addConsoleCommand(root, context);
  addPublishCommand(root, context);
  addBacktestCommand(root, context);
  addDoctorCommand(root, context);
  addScheduleCommand(root, context);
  addCancelCommand(root, context);
  addReplayCommand(root, context);
  const auto known = [&root](const std::string& name) {
    return !root.get_subcommands([&name](CLI::App* sub) { return sub->check_name(name); }).empty();
  };
  if (argc > 1 && argv[1][0] != '-' && !known(argv[1])) {
    err << "relay: unknown command \"" << argv[1] << "\"\n"
        << "Run 'relay --help' for usage.\n";
    return kExitUsage;
  }
  try {
    root.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    // CLI11 prints help (of the right subcommand) for --help and an error for the rest; every
    // parse failure is a usage error (exit 2).
    return root.exit(error, out, err) == 0 ? kExitOk : kExitUsage;
  }
  return context.exit_code;
}

}  // namespace relay::cli
