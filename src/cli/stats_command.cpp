#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/json_output.h"
#include "cli/redis_session.h"
#include "cli/table.h"
#include "common/duration.h"
#include "common/system_clock.h"
#include "history/archive_reader.h"
#include "invocation/ready_backlog.h"
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

// docs/replay.md "Archive": each archive's size, oldest entry and retention, and how far the
// archiver is behind the stream (null when no worker archives).
Json archivesJson(const history::ArchivesStatus& status) {
  if (status.archives.empty() && status.archiver.owner.empty()) return nullptr;
  Json archives = Json::array();
  for (const history::ArchiveStatus& archive : status.archives) {
    archives.push_back({{"key", archive.key},
                        {"app", archive.app.empty() ? Json() : Json(archive.app)},
                        {"entries", archive.entries},
                        {"oldest", archive.oldest ? Json(archive.oldest->toString()) : Json()},
                        {"newest", archive.newest ? Json(archive.newest->toString()) : Json()},
                        {"retention_ms", archive.retention_ms}});
  }
  const history::ArchiverStatus& archiver = status.archiver;
  return {{"archives", std::move(archives)},
          {"archiver",
           {{"owner", archiver.owner},
            {"cursor", archiver.cursor},
            {"archived", archiver.archived},
            {"lag_ms", archiver.lag_ms},
            {"gaps", archiver.gaps},
            {"lost", archiver.lost},
            {"last_gap", archiver.last_gap_from.empty() ? Json()
                                                        : Json{{"after", archiver.last_gap_from},
                                                               {"up_to", archiver.last_gap_to}}}}}};
}

void printArchives(const history::ArchivesStatus& status, long long now_ms, std::ostream& out) {
  if (status.archives.empty() && status.archiver.owner.empty()) return;
  for (const history::ArchiveStatus& archive : status.archives) {
    out << "archive " << printable(archive.key)
        << (archive.app.empty() ? std::string(" (the stream's)")
                                : " (app " + printable(archive.app) + ")")
        << ": " << archive.entries << (archive.entries == 1 ? " entry" : " entries");
    if (archive.oldest) {
      const long long age = now_ms - static_cast<long long>(archive.oldest->ms);
      out << ", oldest " << archive.oldest->toString() << " ("
          << formatDuration(std::chrono::milliseconds(std::max(0LL, age))) << " old)";
    }
    out << ", retention " << formatDuration(std::chrono::milliseconds(archive.retention_ms))
        << "\n";
  }
  const history::ArchiverStatus& archiver = status.archiver;
  if (archiver.owner.empty()) return;
  out << "archiver: " << printable(archiver.owner) << ", at " << archiver.cursor << ", "
      << (archiver.lag_ms == 0
              ? std::string("caught up")
              : formatDuration(std::chrono::milliseconds(archiver.lag_ms)) + " behind")
      << ", " << archiver.archived << " copies written";
  if (archiver.gaps > 0) {
    out << ", " << archiver.gaps << (archiver.gaps == 1 ? " gap of " : " gaps of ") << archiver.lost
        << (archiver.lost == 1 ? " entry" : " entries") << " (last: after "
        << archiver.last_gap_from << " up to " << archiver.last_gap_to
        << ", trimmed before they were archived)";
  }
  out << "\n";
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
  // The group's ready backlog (docs/operations.md "Ready backlog"); absent without the group.
  auto backlog = invocation::ReadyBacklogReader(session->keys).read(*session->redis);
  if (!backlog.ok() && backlog.error().kind != ErrorKind::kNotFound) {
    context.err << "relay stats: ready backlog: " << backlog.error().message << "\n";
    context.exit_code = kExitFailed;
    return;
  }
  const long long now_ms = unixMillis(SystemClock().now());
  auto archives = history::readArchivesStatus(*session->redis, session->keys, now_ms);
  if (!archives.ok()) return reportRedisError("stats", archives.error(), context);
  if (options.json) {
    Json list = Json::array();
    for (const stream::HandlerStats& row : rows) {
      list.push_back({{"app", row.app},
                      {"handler", row.handler},
                      {"succeeded", row.succeeded},
                      {"failed", row.failed},
                      {"dlq", row.dead_lettered},
                      {"runs", row.runs()},
                      {"duration_seconds", row.duration_seconds},
                      {"deferred", row.deferred},
                      {"deduplicated", row.deduplicated},
                      {"superseded", row.superseded},
                      {"retry_after", row.retry_after},
                      {"cancelled", row.cancelled}});
    }
    Json out = {{"stream", session->keys.stream}, {"group", session->keys.group}};
    if (backlog.ok()) {
      out["ready_backlog"] = {{"ready", backlog->ready()},
                              {"lag", backlog->lag},
                              {"pending", backlog->pending},
                              {"parked", backlog->parked},
                              {"waiting_backoff", backlog->waiting_backoff},
                              {"waiting_pause", backlog->waiting_pause}};
    } else {
      out["ready_backlog"] = nullptr;
    }
    out["archive"] = archivesJson(*archives);
    out["handlers"] = std::move(list);
    context.out << prettyJson(out) << "\n";
    return;
  }
  if (backlog.ok()) {
    context.out << "ready backlog: " << backlog->ready() << " (" << backlog->lag
                << " not yet delivered + " << backlog->pending << " pending - "
                << backlog->waiting_backoff << " waiting for a backoff - " << backlog->waiting_pause
                << " waiting for a pause"
                << ")\n";
  } else {
    context.out << "ready backlog: - (" << backlog.error().message << ")\n";
  }
  printArchives(*archives, now_ms, context.out);
  if (rows.empty()) {
    context.out << "no statistics recorded yet in " << session->keys.stats() << "\n";
    return;
  }
  // The flow-control columns (docs/apps.md "Flow control") only once some handler has one, so
  // the table of apps without flow control stays as narrow as it was.
  const bool flow = std::any_of(rows.begin(), rows.end(), [](const stream::HandlerStats& row) {
    return row.deferred + row.deduplicated + row.superseded + row.retry_after > 0;
  });
  // Likewise the cancelled runs (docs/pipeline.md "Cancellation") once some were.
  const bool cancels = std::any_of(
      rows.begin(), rows.end(), [](const stream::HandlerStats& row) { return row.cancelled > 0; });
  std::vector<std::vector<std::string>> table = {
      {"APP", "HANDLER", "SUCCEEDED", "FAILED", "DLQ", "RUNS", "TOTAL TIME", "AVG TIME"}};
  if (flow) {
    table.front().insert(table.front().end(),
                         {"DEFERRED", "DEDUPLICATED", "SUPERSEDED", "RETRY-AFTER"});
  }
  if (cancels) table.front().push_back("CANCELLED");
  for (const stream::HandlerStats& row : rows) {
    table.push_back({printable(row.app), printable(row.handler), std::to_string(row.succeeded),
                     std::to_string(row.failed), std::to_string(row.dead_lettered),
                     std::to_string(row.runs()), seconds(row.duration_seconds),
                     row.runs() > 0 ? seconds(row.duration_seconds / row.runs()) : "-"});
    if (flow) {
      table.back().insert(table.back().end(),
                          {std::to_string(row.deferred), std::to_string(row.deduplicated),
                           std::to_string(row.superseded), std::to_string(row.retry_after)});
    }
    if (cancels) table.back().push_back(std::to_string(row.cancelled));
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
      "Per app/handler totals every worker records: succeeded, failed, dead-lettered, time, "
      "flow control's deferred, deduplicated, superseded and retry-after counts, and cancelled "
      "runs");
  command->add_flag("--json", options->json,
                    "Print one JSON object: the ready backlog and one object per app/handler");
  CLI::App* reset = command->add_subcommand("reset", "Clear the statistics of every worker");
  reset->callback([&context] { runReset(context); });
  command->callback([command, options, &context] {
    if (!command->get_subcommands().empty()) return;  // `stats reset` ran instead
    runStats(*options, context);
  });
}

}  // namespace relay::cli
