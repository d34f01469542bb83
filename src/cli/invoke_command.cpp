#include <CLI/CLI.hpp>
#include <chrono>
#include <iostream>
#include <memory>

#include "catalog/invocation_spec.h"
#include "cli/loaded_apps.h"
#include "cli/print_sink.h"
#include "common/duration.h"
#include "common/rfc3339.h"
#include "common/system_clock.h"
#include "event/event.h"
#include "pattern/evaluator.h"

namespace relay::cli {
namespace {

struct InvokeOptions {
  AppFlags flags;
  std::string name;
  std::string event;
};

std::string millis(std::chrono::nanoseconds duration) {
  return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(duration).count()) +
         "ms";
}

void invoke(const InvokeOptions& options, CommandContext& context) {
  SystemClock clock;
  auto raw = readEventArgument(options.event, std::cin);
  if (!raw.ok()) {
    context.err << "relay app invoke: " << raw.error().message << "\n";
    context.exit_code = kExitUsage;
    return;
  }
  auto event = event::decode(*raw);
  if (!event.ok()) {
    context.err << "relay app invoke: invalid event: " << event.error().message << "\n";
    context.exit_code = kExitUsage;
    return;
  }
  auto loaded = loadApps(options.flags, "app invoke", clock, context);
  if (!loaded) return;
  const auto snapshot = loaded->registry->snapshot();
  const app::AppEntry* entry = findLoadedApp(*snapshot, options.name, "app invoke", context);
  if (entry == nullptr) return;
  const app::App& app = *entry->app;
  const Instant now = Instant::fromWallTime(clock.now());
  const std::string message_id = "manual-" + std::to_string(unixMillis(clock.now()));
  PrintSink sink(context.out);
  int matched = 0;
  int failed = 0;
  for (const app::Rule& rule : app.rules) {
    if (!pattern::matches(*rule.pattern, *event, now)) continue;
    ++matched;
    const runtime::InvocationSpec spec = catalog::invocationSpec(
        app, rule.handler, rule.timeout, message_id, 1, runtime::Trigger::kManual, *raw);
    auto outcome = loaded->runtime->run(spec, sink);
    if (!outcome.ok()) {
      ++failed;
      context.out << app.name << "/" << rule.handler << ": unavailable: " << outcome.error().message
                  << "\n";
    } else if (outcome->succeeded) {
      context.out << app.name << "/" << rule.handler << ": succeeded in "
                  << millis(outcome->duration) << "\n";
    } else {
      ++failed;
      context.out << app.name << "/" << rule.handler << ": failed (" << outcome->reason << ") in "
                  << millis(outcome->duration) << "\n";
    }
  }
  if (matched == 0) {
    context.out << "no rule of " << app.name << " matches this event\n";
    context.exit_code = kExitFailed;
  } else if (failed > 0) {
    context.exit_code = kExitFailed;
  }
}

}  // namespace

void addInvokeCommand(CLI::App& root, CommandContext& context) {
  CLI::App* group = root.get_subcommand("app");
  auto options = std::make_shared<InvokeOptions>();
  CLI::App* command = group->add_subcommand(
      "invoke",
      "Run each handler of NAME whose rule matches the event once, now (manual: outside the "
      "stream lifecycle, no retries, no DLQ)");
  command->add_option("NAME", options->name, "The app")->required();
  command->add_option("--event", options->event, "The event: JSON, or @FILE (default: stdin)")
      ->type_name("JSON|@FILE");
  addAppFlags(*command, options->flags);
  command->callback([options, &context] { invoke(*options, context); });
}

}  // namespace relay::cli
