#include <CLI/CLI.hpp>
#include <condition_variable>
#include <memory>
#include <mutex>

#include "cli/app_flags.h"
#include "cli/command.h"
#include "cli/signal_stopper.h"
#include "common/random.h"
#include "common/system_clock.h"
#include "console/console.h"

namespace relay::cli {
namespace {

struct ConsoleOptions {
  AppFlags flags;
  bool read_only = false;
};

void runConsole(const ConsoleOptions& options, CommandContext& context) {
  auto config = console::loadConsoleConfig(
      config::processEnvironment(), {options.flags.apps, options.flags.runtime}, options.read_only);
  if (!config.ok()) {
    context.err << "relay console: " << config.error().message << "\n";
    context.exit_code = kExitUsage;
    return;
  }
  SignalStopper stopper;  // before Console::create starts threads (signal_stopper.h)
  SystemClock clock;
  SystemRandom random;
  auto created = console::Console::create(*config, context.err, clock, random);
  if (!created.ok()) {
    context.err << "relay console: " << created.error().message << "\n";
    context.exit_code = kExitFailed;
    return;
  }
  console::Console& console = **created;
  std::mutex mutex;
  std::condition_variable stopped;
  bool stop = false;
  stopper.start([&](int signal) {
    console.logger().info(signal == SIGINT ? "SIGINT: stopping" : "SIGTERM: stopping");
    std::lock_guard lock(mutex);
    stop = true;
    stopped.notify_all();
  });
  if (auto started = console.start(); !started.ok()) {
    context.err << "relay console: " << started.error().message << "\n";
    context.exit_code = kExitFailed;
    return;
  }
  std::unique_lock lock(mutex);
  stopped.wait(lock, [&stop] { return stop; });
  console.stop();
  console.logger().info("relay console stopped");
}

}  // namespace

void addConsoleCommand(CLI::App& root, CommandContext& context) {
  CLI::App* command = root.add_subcommand(
      "console",
      "Serve the web console on RELAY_CONSOLE_ADDR (default 127.0.0.1:9465): throughput, apps, "
      "pending messages, dead letters (search, inspect, replay, delete) and a pattern "
      "playground, from the configuration `relay start` uses");
  auto options = std::make_shared<ConsoleOptions>();
  addAppFlags(*command, options->flags);
  command->add_flag("--read-only", options->read_only,
                    "Serve no mutation endpoint at all: no replay, no delete");
  command->callback([options, &context] { runConsole(*options, context); });
}

}  // namespace relay::cli
