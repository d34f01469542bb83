#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>
#include <string>

#include "cli/command.h"
#include "cli/json_output.h"
#include "common/duration.h"
#include "common/system_clock.h"
#include "config/config.h"
#include "http/address.h"
#include "http/client.h"

namespace relay::cli {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::chrono::seconds kTimeout{5};

struct HealthOptions {
  bool json = false;
};

std::string firstLine(const std::string& body) {
  std::string line = body.substr(0, body.find('\n'));
  return line.empty() ? "(no reason given)" : line;
}

// `2h3m4s`, to the second.
std::string age(const Json& ms) {
  const long long value = ms.is_number() ? ms.get<long long>() : 0;
  return formatDuration(std::chrono::milliseconds(value / 1000 * 1000));
}

std::string text(const Json& value) { return value.is_string() ? value.get<std::string>() : ""; }

// One explained message (stream/pending_json.h) on one line.
std::string messageLine(const Json& message) {
  return text(message["id"]) + ", " + age(message["age_ms"]) + " old, held by " +
         text(message["consumer"]) + " (" + std::to_string(message.value("deliveries", 0)) +
         " deliveries): " + text(message["reason"]["kind"]) + ": " + text(message["description"]);
}

// What the worker's housekeeper learned of the pending messages (/status), for people.
void printPending(const Json& status, std::ostream& out) {
  const Json& pending = status["pending"];
  if (!pending.is_object()) return;
  if (!pending.value("checked", false)) {
    out << "pending: not inspected yet\n";
    return;
  }
  if (!text(pending["problem"]).empty()) {
    out << "pending: cannot tell: " << text(pending["problem"]) << "\n";
    return;
  }
  out << "pending: " << pending.value("count", 0LL) << " messages\n";
  if (pending["oldest"].is_object())
    out << "oldest pending: " << messageLine(pending["oldest"]) << "\n";
  const Json& held = pending["trim_held_back"];
  if (held.is_object() && held["message"].is_object()) {
    out << "trimming held back (group " << text(held["group"]) << ", REDIS_STREAM_RETENTION "
        << age(pending["retention_ms"]) << ") by: " << messageLine(held["message"]) << "\n";
  } else if (pending.value("retention_ms", 0LL) > 0) {
    out << "trimming: not held back by a pending message\n";
  }
}

void runHealth(const HealthOptions& options, CommandContext& context) {
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
  // The details (a worker before /status answers 404: the verdict alone).
  Json status;
  if (auto detail = http::get(*address, "/status", kTimeout, clock);
      detail.ok() && detail->status == 200) {
    status = Json::parse(detail->body, nullptr, false);
    if (status.is_discarded() || !status.is_object()) status = Json();
  }
  const bool healthy = response->status == 200;
  if (!healthy) context.exit_code = kExitFailed;
  if (options.json) {
    Json out = {{"address", address->toString()},
                {"healthy", healthy},
                {"healthz", firstLine(response->body)}};
    if (status.is_object()) {
      for (const auto& [key, value] : status.items()) {
        if (key != "healthy") out[key] = value;
      }
    }
    context.out << prettyJson(out) << "\n";
    return;
  }
  if (healthy) {
    context.out << "healthy: " << firstLine(response->body) << " (" << address->toString() << ")\n";
  } else {
    context.err << "unhealthy (HTTP " << response->status << " from " << address->toString()
                << "): " << firstLine(response->body) << "\n";
  }
  if (status.is_object()) printPending(status, context.out);
}

}  // namespace

void addHealthCommand(CLI::App& root, CommandContext& context) {
  auto options = std::make_shared<HealthOptions>();
  CLI::App* command = root.add_subcommand(
      "health",
      "Ask the running worker at RELAY_HTTP_ADDR (/healthz, /status): its health, the oldest "
      "pending message and what holds trimming back; exit 0 healthy, 1 not");
  command->add_flag("--json", options->json, "Print one JSON object");
  command->callback([options, &context] { runHealth(*options, context); });
}

}  // namespace relay::cli
