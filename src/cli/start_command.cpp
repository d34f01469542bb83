#include <CLI/CLI.hpp>
#include <cstdlib>
#include <memory>

#include "cli/app_flags.h"
#include "cli/command.h"
#include "cli/signal_stopper.h"
#include "common/random.h"
#include "common/system_clock.h"
#include "config/config.h"
#include "worker/worker.h"

namespace relay::cli {

void addStartCommand(CLI::App& root, CommandContext& context) {
  CLI::App* command = root.add_subcommand(
      "start", "Run the worker in the foreground; SIGTERM/SIGINT stop it gracefully");
  auto flags = std::make_shared<AppFlags>();
  addAppFlags(*command, *flags);
  command->callback([&context, flags] {
    const auto config = settingOrUsageError(
        config::loadConfig(config::processEnvironment(), {flags->apps, flags->runtime},
                           config::defaultConsumerName()),
        "start", context);
    if (!config) return;
    SignalStopper stopper;  // before Worker::create starts threads (signal_stopper.h)
    SystemClock clock;
    SystemRandom random;
    auto created = worker::Worker::create(*config, context.err, clock, random);
    if (!created.ok()) {
      context.err << "relay start: " << created.error().message << "\n";
      context.exit_code = kExitFailed;
      return;
    }
    worker::Worker& worker = **created;
    // A second signal while stopping stops at once: the running handlers' claims are released
    // and the process ends with 128 + the signal, its handlers killed with it
    // (docs/pipeline.md "Stopping").
    stopper.start(
        [&worker](int signal) {
          worker.logger().info(signal == SIGINT ? "SIGINT: stopping (again to stop at once)"
                                                : "SIGTERM: stopping (again to stop at once)");
          worker.stop();
        },
        [&worker](int signal) {
          worker.abort();
          std::_Exit(128 + signal);
        });
    worker.run();
  });
}

}  // namespace relay::cli
