// `relay backtest`: candidate templates against recent stream history, next to the deployed
// ones (docs/cli.md). Read only: XREVRANGE and nothing else.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/backtest.h"
#include "cli/json_output.h"
#include "cli/loaded_apps.h"
#include "cli/redis_session.h"
#include "cli/table.h"
#include "common/duration.h"
#include "common/rfc3339.h"
#include "common/system_clock.h"
#include "stream/stream_entry.h"
#include "stream/stream_id.h"

namespace relay::cli {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kName = "relay backtest";
constexpr long long kDefaultLast = 1000;
constexpr long long kPage = 500;

struct BacktestOptions {
  std::string apps;
  std::string since;
  long long last = 0;
  std::size_t samples = 3;
  bool json = false;
};

std::string timeOf(const std::string& id) {
  const auto parsed = stream::StreamId::parse(id);
  if (!parsed) return "?";
  return formatRfc3339(WallTime(std::chrono::milliseconds(parsed->ms)));
}

Json countJson(const std::optional<RuleCount>& count) {
  if (!count) return nullptr;
  return {{"matches", count->matches}, {"samples", count->samples}};
}

std::string change(const RuleRow& row) {
  if (!row.deployed) return "new rule";
  if (!row.candidate) return "removed";
  const auto delta = static_cast<long long>(row.candidate->matches) -
                     static_cast<long long>(row.deployed->matches);
  return delta == 0 ? "" : (delta > 0 ? "+" : "") + std::to_string(delta);
}

void printJson(const Backtest& backtest, const BacktestOptions& options,
               const config::WorkerConfig& config, bool compared, CommandContext& context) {
  Json rules = Json::array();
  for (const RuleRow& row : backtest.rows()) {
    rules.push_back({{"app", row.app},
                     {"handler", row.handler},
                     {"line", row.line},
                     {"candidate", countJson(row.candidate)},
                     {"deployed", countJson(row.deployed)}});
  }
  Json out = {{"stream", config.stream},
              {"candidate_apps", options.apps},
              {"deployed_apps", compared ? Json(config.apps.string()) : Json()},
              {"entries", backtest.entries()},
              {"newest_id", backtest.newestId()},
              {"oldest_id", backtest.oldestId()},
              {"events", backtest.events()},
              {"schedules_skipped", backtest.schedules()},
              {"malformed", backtest.malformed()},
              {"oversized", backtest.oversized()},
              {"unmatched",
               {{"candidate", backtest.unmatchedCandidate()},
                {"deployed", compared ? Json(backtest.unmatchedDeployed()) : Json()}}},
              {"rules", std::move(rules)}};
  context.out << prettyJson(out) << "\n";
}

void printText(const Backtest& backtest, const config::WorkerConfig& config, bool compared,
               CommandContext& context) {
  std::ostream& out = context.out;
  if (backtest.entries() == 0) {
    out << "no entries of stream " << printable(config.stream) << " in the range\n";
  } else {
    out << backtest.entries() << " entries of stream " << printable(config.stream) << ", "
        << backtest.oldestId() << " (" << timeOf(backtest.oldestId()) << ") to "
        << backtest.newestId() << " (" << timeOf(backtest.newestId()) << ")\n";
  }
  out << backtest.events() << " events, " << backtest.schedules()
      << " schedule occurrences skipped, " << backtest.malformed() << " malformed and "
      << backtest.oversized() << " oversized (the worker dead-letters those)\n";
  std::vector<std::vector<std::string>> table = {
      {"APP", "HANDLER", "LINE", "CANDIDATE", "DEPLOYED", "CHANGE", "SAMPLES (newest first)"}};
  const auto number = [](const std::optional<RuleCount>& count) {
    return count ? std::to_string(count->matches) : std::string("-");
  };
  for (const RuleRow& row : backtest.rows()) {
    const std::vector<std::string>& samples =
        row.candidate ? row.candidate->samples : row.deployed->samples;
    std::string joined;
    for (const std::string& id : samples) joined += (joined.empty() ? "" : " ") + id;
    table.push_back({printable(row.app), printable(row.handler), std::to_string(row.line),
                     number(row.candidate), number(row.deployed), compared ? change(row) : "",
                     joined});
  }
  table.push_back({"(unmatched)", "", "", std::to_string(backtest.unmatchedCandidate()),
                   compared ? std::to_string(backtest.unmatchedDeployed()) : "-", "", ""});
  printTable(out, table);
}

// Every template error of the candidate as file:line:col: message; false when there was one.
bool checkCandidate(const app::Snapshot& candidate, CommandContext& context) {
  std::size_t errors = 0;
  for (const app::AppEntry& entry : candidate.apps()) {
    for (const app::Diagnostic& diagnostic : entry.errors) {
      context.err << diagnostic.toString() << "\n";
      ++errors;
    }
  }
  if (errors > 0) {
    context.err << kName << ": " << errors << " error(s) in the candidate templates of "
                << candidate.root().string() << "; nothing was read\n";
    return false;
  }
  if (candidate.apps().empty()) {
    context.err << kName << ": no directory in " << candidate.root().string()
                << " holds a template.yaml\n";
    return false;
  }
  return true;
}

void runBacktest(const BacktestOptions& options, Clock& clock, CommandContext& context) {
  context.exit_code = kExitUsage;
  std::optional<std::chrono::milliseconds> since;
  if (!options.since.empty()) {
    auto parsed = parseDuration(options.since);
    if (!parsed.ok() || parsed->count() <= 0) {
      context.err << kName << ": invalid --since \"" << options.since
                  << "\": expected a positive duration such as 90s, 30m, 1h or 7d\n";
      return;
    }
    since = *parsed;
  }
  if (options.samples > 100) {
    context.err << kName << ": --samples is at most 100\n";
    return;
  }
  auto config = loadCommandConfig("backtest", {}, context);
  if (!config) return;
  const auto candidate = loadTemplates(options.apps);
  if (!candidate.ok()) {
    context.err << kName << ": --apps: " << candidate.error().message << "\n";
    return;
  }
  if (!checkCandidate(**candidate, context)) return;
  auto loaded = loadTemplates(config->apps);
  std::shared_ptr<const app::Snapshot> deployed;
  if (loaded.ok()) {
    deployed = std::move(loaded).value();
  } else {
    context.err << "note: the deployed apps root (RELAY_APPS) cannot be read, nothing to "
                   "compare with: "
                << loaded.error().message << "\n";
  }
  for (std::size_t i = 0; deployed && i < deployed->apps().size(); ++i) {
    if (!deployed->apps()[i].errors.empty()) {
      context.err << "note: deployed app " << deployed->apps()[i].name
                  << " has an invalid template here; its rules are not counted\n";
    }
  }

  auto session = connectRedisSession("backtest", std::move(*config), context);
  if (!session) return;
  Backtest backtest(*candidate, deployed, session->config.max_event_bytes, options.samples);
  const std::string start = since ? std::to_string(std::max<long long>(
                                        0, std::chrono::duration_cast<std::chrono::milliseconds>(
                                               clock.now().time_since_epoch() - *since)
                                               .count()))
                                  : "-";
  long long remaining = since ? std::numeric_limits<long long>::max()
                              : (options.last > 0 ? options.last : kDefaultLast);
  std::string end = "+";
  while (remaining > 0) {
    const long long count = std::min(kPage, remaining);
    auto reply = session->redis->command(
        {"XREVRANGE", session->config.stream, end, start, "COUNT", std::to_string(count)},
        // Entries are read cut like the worker reads them (docs/operations.md "Memory"): a huge
        // one counts as oversized without ever being held whole.
        stream::entryReplyLimits(session->config.max_event_bytes));
    if (!reply.ok()) return reportRedisError("backtest", reply.error(), context);
    auto entries = stream::parseEntries(reply->view());
    if (!entries.ok()) return reportRedisError("backtest", entries.error(), context);
    for (const stream::StreamEntry& entry : *entries) backtest.add(entry);
    remaining -= static_cast<long long>(entries->size());
    if (static_cast<long long>(entries->size()) < count) break;
    end = "(" + entries->back().id;  // exclusive: the page continues below the last id
  }
  if (options.json) {
    printJson(backtest, options, session->config, deployed != nullptr, context);
  } else {
    printText(backtest, session->config, deployed != nullptr, context);
  }
  context.exit_code = kExitOk;
}

}  // namespace

void addBacktestCommand(CLI::App& root, CommandContext& context) {
  auto options = std::make_shared<BacktestOptions>();
  CLI::App* command = root.add_subcommand(
      "backtest",
      "Count, per rule, the recent stream events that candidate templates would match, next to "
      "the deployed templates (RELAY_APPS); reads only, runs nothing");
  command->add_option("--apps", options->apps, "Apps root holding the candidate templates")
      ->type_name("DIR")
      ->required();
  CLI::Option* since = command->add_option(
      "--since", options->since, "Events published within this duration (90s, 30m, 1h, 7d)");
  CLI::Option* last =
      command
          ->add_option("--last", options->last,
                       "The N most recent stream entries (default 1000 when --since is absent)")
          ->check(CLI::PositiveNumber);
  since->excludes(last);
  command->add_option("--samples", options->samples, "Message ids shown per rule (default 3)");
  command->add_flag("--json", options->json, "Print one JSON object");
  command->callback([options, &context] {
    SystemClock clock;
    runBacktest(*options, clock, context);
  });
}

}  // namespace relay::cli
