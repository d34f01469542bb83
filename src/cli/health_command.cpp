#include <CLI/CLI.hpp>

#include <string>

#include "cli/command.h"
#include "common/system_clock.h"
#include "config/config.h"
#include "http/address.h"
#include "http/client.h"

namespace relay::cli {
namespace {

constexpr std::chrono::seconds kTimeout{5};

std::string firstLine(const std::string& body) {
  std::string line = body.substr(0, body.find('\n'));
  return line.empty() ? "(no reason given)" : line;
}

void runHealth(CommandContext& context) {
  auto config = config::loadConfig(config::processEnvironment(), {}, config::defaultConsumerName());
  if (!config.ok()) {
    context.err << "relay health: " << config.error().message << "\n";
    context.exit_code = kExitUsage;
    return;
  }
  auto address = http::parseAddress(config->http_addr);
  if (!address.ok()) {
    context.err << "relay health: RELAY_HTTP_ADDR: " << address.error().message << "\n";
    context.exit_code = kExitUsage;
    return;
  }
  SystemClock clock;
  auto response = http::get(*address, "/healthz", kTimeout, clock);
  if (!response.ok()) {
    context.err << "unhealthy: no worker answered at " << address->toString() << ": "
                << response.error().message << "\n";
    context.exit_code = kExitFailed;
    return;
  }
  if (response->status != 200) {
    context.err << "unhealthy (HTTP " << response->status << " from " << address->toString()
                << "): " << firstLine(response->body) << "\n";
    context.exit_code = kExitFailed;
    return;
  }
  context.out << "healthy: " << firstLine(response->body) << " (" << address->toString() << ")\n";
}

}  // namespace

void addHealthCommand(CLI::App& root, CommandContext& context) {
  CLI::App* command = root.add_subcommand(
      "health", "Ask the running worker at RELAY_HTTP_ADDR (/healthz); exit 0 healthy, 1 not");
  command->callback([&context] { runHealth(context); });
}

}  // namespace relay::cli
