// `relay replay`: replays of stream history through an app's rules (docs/replay.md), created
// here and driven by the workers; `ls`, `show`, `cancel`.
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <atomic>
#include <chrono>
#include <fstream>
#include <iomanip>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <thread>
#include <variant>

#include "cli/command.h"
#include "cli/json_output.h"
#include "cli/loaded_apps.h"
#include "cli/redis_session.h"
#include "cli/replay_options.h"
#include "cli/replay_view.h"
#include "cli/signal_stopper.h"
#include "cli/table.h"
#include "common/printable.h"
#include "common/system_clock.h"
#include "history/replay_record.h"
#include "history/replay_selection.h"
#include "history/retention_record.h"
#include "invocation/redis_lifecycle_store.h"
#include "pattern/pattern_text.h"
#include "stream/stream_entry.h"
#include "stream/stream_id.h"

namespace relay::cli {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kReplayName = "relay replay";
constexpr std::size_t kDryRunPage = 500;

struct ReplayCreateOptions {
  std::string app;
  std::string rule;
  ReplayWindowFlags window;
  std::string filter_file;
  std::string rate;
  bool dry_run = false;
  bool again = false;
  bool json = false;
  bool detach = false;
};

struct ReplayIdOptions {
  std::string id;
  bool json = false;
  bool follow = false;
  bool dead_letter = false;
};

bool replayUsage(const std::string& message, CommandContext& context) {
  context.err << kReplayName << ": " << message << "\n";
  context.exit_code = kExitUsage;
  return false;
}

// The --filter file's text, compiled once here so that its problems name the file.
std::optional<std::string> readFilterFile(const std::string& path, CommandContext& context) {
  if (path.empty()) return std::string();
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    replayUsage("--filter " + path + ": cannot be read", context);
    return std::nullopt;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The window's entries the selection copies, read only (`--dry-run`).
void replayDryRun(RedisSession& session, const history::ReplaySpec& spec, bool json,
                  CommandContext& context) {
  auto snapshot = loadTemplates(session.config.apps);
  if (!snapshot.ok()) {
    replayUsage("RELAY_APPS: " + snapshot.error().message, context);
    return;
  }
  auto selection =
      history::ReplaySelection::create(*snapshot, spec, session.config.max_event_bytes);
  if (!selection.ok()) {
    replayUsage(selection.error().message, context);
    return;
  }
  long long scanned = 0, selected = 0;
  std::string first_selected, last_selected;
  std::string start = spec.from;
  while (true) {
    auto reply = session.redis->command(
        {"XRANGE", session.keys.stream, start, spec.to, "COUNT", std::to_string(kDryRunPage)},
        stream::entryReplyLimits(session.config.max_event_bytes));
    if (!reply.ok()) return reportRedisError("replay", reply.error(), context);
    auto entries = stream::parseEntries(reply->view());
    if (!entries.ok()) return reportRedisError("replay", entries.error(), context);
    for (const stream::StreamEntry& entry : *entries) {
      ++scanned;
      if (!selection->selects(entry)) continue;
      ++selected;
      if (first_selected.empty()) first_selected = entry.id;
      last_selected = entry.id;
    }
    if (entries->size() < kDryRunPage) break;
    start = "(" + entries->back().id;
  }
  auto missing = history::missingOfWindow(*session.redis, session.keys, spec.from, spec.to, "",
                                          spec.app, session.config.stream_retention);
  if (!missing.ok()) return reportRedisError("replay", missing.error(), context);
  if (json) {
    Json out = {{"dry_run", true},      {"app", spec.app},         {"rule", spec.handler},
                {"from", spec.from},    {"to", spec.to},           {"scanned", scanned},
                {"selected", selected}, {"first", first_selected}, {"last", last_selected},
                {"missing", nullptr}};
    if (*missing) {
      const history::MissingPart& part = **missing;
      out["missing"] = {{"from", part.from}, {"to", part.to}, {"reason", part.reason}};
    }
    context.out << prettyJson(out) << "\n";
  } else {
    context.out << "dry run: " << selected << " of " << scanned << " entries of stream "
                << printable(session.keys.stream) << " in " << spec.from << ".." << spec.to
                << " would be replayed through " << printable(spec.app)
                << (spec.handler.empty() ? "" : "/" + printable(spec.handler))
                << "; nothing was published\n";
    if (*missing) printMissing((*missing)->from, (*missing)->to, (*missing)->reason, context.err);
  }
}

void runReplayCreate(const ReplayCreateOptions& options, CommandContext& context) {
  auto rate = parseReplayRate(options.rate);
  if (!rate.ok()) return (void)replayUsage(rate.error().message, context);
  const auto filter = readFilterFile(options.filter_file, context);
  if (!filter) return;
  if (!filter->empty()) {
    auto compiled = pattern::compileText(*filter, options.filter_file);
    if (auto* problems = std::get_if<std::vector<std::string>>(&compiled)) {
      for (const std::string& problem : *problems) context.err << problem << "\n";
      context.exit_code = kExitUsage;
      return;
    }
  }
  auto session = openRedisSession("replay", {}, context);
  if (!session) return;
  auto now = history::redisNowMs(*session->redis);
  if (!now.ok()) return reportRedisError("replay", now.error(), context);
  auto window = replayWindow(options.window, *now);
  if (!window.ok()) return (void)replayUsage(window.error().message, context);
  history::ReplaySpec spec;
  spec.app = options.app;
  spec.handler = options.rule;
  spec.from = window->first;
  spec.to = window->second;
  spec.filter = *filter;
  spec.rate = *rate;
  spec.again = options.again;
  if (options.dry_run) return replayDryRun(*session, spec, options.json, context);

  // Checked here too (the driving worker checks it again against its own templates): a typo
  // is an error now, not a failed replay later.
  auto snapshot = loadTemplates(session->config.apps);
  if (snapshot.ok()) {
    auto selection =
        history::ReplaySelection::create(*snapshot, spec, session->config.max_event_bytes);
    if (!selection.ok()) return (void)replayUsage(selection.error().message, context);
  }
  std::random_device random;
  const std::string id = history::newReplayId(*now, random());
  auto created = history::createReplay(*session->redis, session->keys, spec, id);
  if (!created.ok()) return reportRedisError("replay", created.error(), context);
  if (created->conflict) {
    const history::ReplayConflict& earlier = *created->conflict;
    context.err << kReplayName << ": the window overlaps replay " << earlier.id << " ("
                << earlier.from << ".." << earlier.to
                << ") of the same app and rules; --again replays it again"
                << " (docs/replay.md \"Replaying again\")\n";
    context.exit_code = kExitFailed;
    return;
  }
  if (!options.json) {
    context.err << "replay " << id << " created: " << printable(spec.app)
                << (spec.handler.empty() ? "" : "/" + printable(spec.handler)) << ", " << spec.from
                << ".." << spec.to << "\n";
  }
  if (options.detach) {
    context.out << id << "\n";
    return;
  }
  SystemClock clock;
  followReplay(*session, id, options.json, clock, context);
}

void runReplayLs(const ReplayIdOptions& options, CommandContext& context) {
  auto session = openRedisSession("replay ls", {}, context);
  if (!session) return;
  auto replays = history::listReplays(*session->redis, session->keys);
  if (!replays.ok()) return reportRedisError("replay ls", replays.error(), context);
  if (options.json) {
    Json list = Json::array();
    for (const history::ReplayStatus& replay : *replays) list.push_back(replayJson(replay));
    context.out << prettyJson(list) << "\n";
    return;
  }
  if (replays->empty()) {
    context.out << "no replays in group " << session->keys.group << " of stream "
                << session->keys.stream << "\n";
    return;
  }
  std::vector<std::vector<std::string>> rows = {
      {"ID", "STATE", "SOURCE", "WINDOW", "PROGRESS", "PUBLISHED", "SKIPPED", "DRIVER"}};
  for (const history::ReplayStatus& replay : *replays) rows.push_back(replayRow(replay));
  printTable(context.out, rows);
}

void runReplayShow(const ReplayIdOptions& options, CommandContext& context) {
  auto session = openRedisSession("replay show", {}, context);
  if (!session) return;
  if (options.follow) {
    SystemClock clock;
    return followReplay(*session, options.id, options.json, clock, context);
  }
  auto replay = history::readReplay(*session->redis, session->keys, options.id);
  if (!replay.ok()) return reportRedisError("replay show", replay.error(), context);
  if (!*replay) {
    context.err << "relay replay show: no replay " << printable(options.id) << " in group "
                << session->keys.group << " (relay replay ls lists them)\n";
    context.exit_code = kExitFailed;
    return;
  }
  if (options.json) {
    context.out << prettyJson(replayJson(**replay)) << "\n";
  } else {
    printReplay(**replay, context.out);
  }
}

void runReplayCancel(const ReplayIdOptions& options, CommandContext& context) {
  auto session = openRedisSession("replay cancel", {}, context);
  if (!session) return;
  auto replay = history::readReplay(*session->redis, session->keys, options.id);
  if (!replay.ok()) return reportRedisError("replay cancel", replay.error(), context);
  if (!*replay) {
    context.err << "relay replay cancel: no replay " << printable(options.id) << " in group "
                << session->keys.group << "\n";
    context.exit_code = kExitFailed;
    return;
  }
  SystemClock clock;
  invocation::RedisStoreSettings settings;
  settings.keys = session->keys;
  settings.consumer = "relay-cli";
  settings.retention = session->config.invocation_retention;
  invocation::RedisLifecycleStore store(settings, session->config.redis, clock);
  auto cancelled =
      history::cancelReplay(*session->redis, session->keys, store, options.id, options.dead_letter);
  if (!cancelled.ok()) return reportRedisError("replay cancel", cancelled.error(), context);
  if (options.json) {
    context.out << prettyJson(Json{{"id", options.id},
                                   {"stopped", cancelled->stopped},
                                   {"copies", cancelled->copies},
                                   {"cancelled", cancelled->cancelled},
                                   {"running", cancelled->running},
                                   {"errors", cancelled->errors}})
                << "\n";
  } else {
    context.out << "replay " << options.id
                << (cancelled->stopped ? " cancelled: it publishes nothing more"
                                       : " had finished (" + (*replay)->state + ")")
                << "; of its " << cancelled->copies << " copies, " << cancelled->cancelled
                << " were cancelled before they finished (" << cancelled->running
                << " running: their workers stop them)"
                << (options.dead_letter ? ", dead-lettered" : "") << "\n";
  }
  for (const std::string& error : cancelled->errors) {
    context.err << "relay replay cancel: " << printable(error) << "\n";
  }
  if (!cancelled->errors.empty()) context.exit_code = kExitFailed;
}

}  // namespace

void addReplayCommand(CLI::App& root, CommandContext& context) {
  auto create = std::make_shared<ReplayCreateOptions>();
  CLI::App* command = root.add_subcommand(
      "replay",
      "Run the stream's history of a window through an app's rules again as new invocations "
      "(docs/replay.md); the workers publish the copies, this follows their progress");
  command->add_option("--app", create->app, "The app whose rules judge the entries")
      ->type_name("NAME");
  command->add_option("--rule", create->rule, "Only the rule of this handler")
      ->type_name("HANDLER");
  command->add_option("--since", create->window.since, "The window: the last DURATION (1h, 7d)")
      ->type_name("DURATION");
  command->add_option("--from", create->window.from, "The window's first id (or Unix ms)")
      ->type_name("ID");
  command->add_option("--to", create->window.to, "The window's last id (or Unix ms)")
      ->type_name("ID");
  command
      ->add_option("--filter", create->filter_file, "A pattern file the entries must match as well")
      ->type_name("PATTERN_FILE");
  command->add_option("--rate", create->rate, "At most N copies a second")->type_name("N/s");
  command->add_flag("--dry-run", create->dry_run,
                    "Count what would be replayed; read only, nothing is created");
  command->add_flag("--again", create->again,
                    "Replay a window an earlier replay of the same app and rules covered");
  command->add_flag("--json", create->json, "Progress as JSON lines (the default off a terminal)");
  command->add_flag("--detach", create->detach, "Print the replay's id and return at once");
  command->callback([create, command, &context] {
    if (command->get_subcommands().empty()) {
      if (create->app.empty()) return (void)replayUsage("--app NAME is required", context);
      runReplayCreate(*create, context);
    }
  });

  auto ls = std::make_shared<ReplayIdOptions>();
  CLI::App* ls_command = command->add_subcommand("ls", "List the replays, newest first");
  ls_command->add_flag("--json", ls->json, "Print a JSON array");
  ls_command->callback([ls, &context] { runReplayLs(*ls, context); });

  auto show = std::make_shared<ReplayIdOptions>();
  CLI::App* show_command =
      command->add_subcommand("show", "Show one replay: its window, progress and what is missing");
  show_command->alias("status");
  show_command->add_option("ID", show->id, "The replay id (from `relay replay ls`)")->required();
  show_command->add_flag("--json", show->json, "Print one JSON object (JSON lines with --follow)");
  show_command->add_flag("--follow", show->follow, "Follow its progress until it ends");
  show_command->callback([show, &context] { runReplayShow(*show, context); });

  auto cancel = std::make_shared<ReplayIdOptions>();
  CLI::App* cancel_command = command->add_subcommand(
      "cancel", "Stop a replay and cancel the invocations of its copies that have not finished");
  cancel_command->add_option("ID", cancel->id, "The replay id")->required();
  cancel_command->add_flag("--dead-letter", cancel->dead_letter,
                           "Dead-letter the cancelled invocations (reason cancelled)");
  cancel_command->add_flag("--json", cancel->json, "Print one JSON object");
  cancel_command->callback([cancel, &context] { runReplayCancel(*cancel, context); });
}

}  // namespace relay::cli
