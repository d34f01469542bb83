#include <CLI/CLI.hpp>

#include "cli/build_info.h"
#include "cli/command.h"

namespace relay::cli {

void addVersionCommand(CLI::App& root, CommandContext& context) {
  CLI::App* command = root.add_subcommand("version", "Print Relay's version and build");
  command->callback([&context] {
    context.out << "relay " << kVersion << " (" << kBuildType << ", " << kCompiler << ")\n";
  });
}

}  // namespace relay::cli
