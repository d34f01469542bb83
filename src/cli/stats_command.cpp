#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/json_output.h"
#include "cli/redis_session.h"
#include "cli/table.h"
#include "stream/handler_stats.h"

namespace relay::cli {
namespace {

using Json = nlohmann::ordered_json;

struct StatsOptions {
  bool json = false;
};

std::string seconds(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3fs", value);
  return buffer;
}

void runStats(const StatsOptions& options, CommandContext& context) {
  auto session = openRedisSession("stats", {}, context);
  if (!session) return;
  auto reply = session->redis->command({"HGETALL", session->keys.stats()});
  if (!reply.ok()) return reportRedisError("stats", reply.error(), context);
  auto items = reply->elements();
  if (!items.ok()) return reportRedisError("stats", items.error(), context);
  std::vector<std::pair<std::string, std::string>> hash;
  for (std::size_t i = 0; i + 1 < items->size(); i += 2) {
    auto name = (*items)[i].string();
    auto value = (*items)[i + 1].string();
    if (name.ok() && value.ok()) hash.emplace_back(std::string(*name), std::string(*value));
  }
  const std::vector<stream::HandlerStats> rows = stream::parseStats(hash);
  if (options.json) {
    Json list = Json::array();
    for (const stream::HandlerStats& row : rows) {
      list.push_back({{"app", row.app},
                      {"handler", row.handler},
                      {"succeeded", row.succeeded},
                      {"failed", row.failed},
                      {"dlq", row.dead_lettered},
                      {"runs", row.runs()},
                      {"duration_seconds", row.duration_seconds}});
    }
    context.out << prettyJson(list) << "\n";
    return;
  }
  if (rows.empty()) {
    context.out << "no statistics recorded yet in " << session->keys.stats() << "\n";
    return;
  }
  std::vector<std::vector<std::string>> table = {
      {"APP", "HANDLER", "SUCCEEDED", "FAILED", "DLQ", "RUNS", "TOTAL TIME", "AVG TIME"}};
  for (const stream::HandlerStats& row : rows) {
    table.push_back({printable(row.app), printable(row.handler), std::to_string(row.succeeded),
                     std::to_string(row.failed), std::to_string(row.dead_lettered),
                     std::to_string(row.runs()), seconds(row.duration_seconds),
                     row.runs() > 0 ? seconds(row.duration_seconds / row.runs()) : "-"});
  }
  printTable(context.out, table);
}

void runReset(CommandContext& context) {
  auto session = openRedisSession("stats reset", {}, context);
  if (!session) return;
  auto removed = session->redis->command({"DEL", session->keys.stats()});
  if (!removed.ok()) return reportRedisError("stats reset", removed.error(), context);
  context.out << (removed->integer().ok() && *removed->integer() > 0 ? "cleared "
                                                                     : "nothing to clear in ")
              << session->keys.stats() << "\n";
}

}  // namespace

void addStatsCommand(CLI::App& root, CommandContext& context) {
  auto options = std::make_shared<StatsOptions>();
  CLI::App* command = root.add_subcommand(
      "stats",
      "Per app/handler totals every worker records: succeeded, failed, dead-lettered, time");
  command->add_flag("--json", options->json, "Print a JSON array: one object per app/handler");
  CLI::App* reset = command->add_subcommand("reset", "Clear the statistics of every worker");
  reset->callback([&context] { runReset(context); });
  command->callback([command, options, &context] {
    if (!command->get_subcommands().empty()) return;  // `stats reset` ran instead
    runStats(*options, context);
  });
}

}  // namespace relay::cli
