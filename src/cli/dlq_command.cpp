#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/registry.h"
#include "cli/app_flags.h"
#include "cli/command.h"
#include "cli/dlq_bulk_replay.h"
#include "cli/json_output.h"
#include "cli/print_sink.h"
#include "cli/redis_session.h"
#include "cli/table.h"
#include "common/system_clock.h"
#include "common/whole_number.h"
#include "config/runtime_factory.h"
#include "dlq/dead_letter_queue.h"
#include "dlq/replayer.h"
#include "event/event.h"
#include "event/render.h"
#include "runtime/runtime.h"
#include "stream/stream_entry.h"
#include "stream/stream_id.h"

namespace relay::cli {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::size_t kReasonWidth = 60;
constexpr int kDefaultLimit = 100;

struct DlqLsOptions {
  bool json = false;
  int limit = kDefaultLimit;
};

struct EntryOptions {
  std::string id;
  bool json = false;
  AppFlags flags;  // replay only
};

// Every field as recorded: `deliveries` and `handler_attempts` are counts, numbers in JSON when
// they are whole numbers; every other field a string.
Json entryJson(const dlq::Entry& entry) {
  Json object = {{"id", entry.id()}};
  for (const auto& [name, value] : entry.record.fields) {
    long long number = 0;
    const bool count =
        (name == "deliveries" || name == "handler_attempts") && parseWholeNumber(value, number);
    object[name] = count ? Json(number) : Json(value);
  }
  // Values the read cut (docs/operations.md "Memory"): the field holds their first bytes only.
  if (!entry.record.cut.empty()) {
    Json cut = Json::object();
    for (const auto& [name, size] : entry.record.cut) cut[name] = size;
    object["cut"] = std::move(cut);
  }
  return object;
}

// A full `<ms>-<seq>` id (a bare `<ms>` would name a range in XRANGE).
bool validId(std::string_view id, std::string_view command, CommandContext& context) {
  if (id.find('-') != std::string_view::npos && stream::StreamId::parse(id)) return true;
  context.err << "relay dlq " << command << ": \"" << printable(id)
              << "\" is not a DLQ entry id (expected <ms>-<seq>, as `relay dlq ls` shows)\n";
  context.exit_code = kExitUsage;
  return false;
}

// The entry `id` of the DLQ, or nullopt (reported, exit 1) when it is missing or Redis failed.
std::optional<dlq::Entry> readEntry(RedisSession& session, const std::string& id,
                                    std::string_view command, CommandContext& context) {
  auto found = dlq::DeadLetterQueue(*session.redis, session.keys.dlq(), 500,
                                    stream::entryReplyLimits(session.config.max_event_bytes))
                   .find(id);
  if (!found.ok()) {
    reportRedisError("dlq " + std::string(command), found.error(), context);
    return std::nullopt;
  }
  if (!*found) {
    context.err << "relay dlq " << command << ": no entry " << id << " in " << session.keys.dlq()
                << "\n";
    context.exit_code = kExitFailed;
  }
  return std::move(found).value();
}

void runDlqLs(const DlqLsOptions& options, CommandContext& context) {
  auto session = openRedisSession("dlq ls", {}, context);
  if (!session) return;
  auto reply = session->redis->command(
      {"XREVRANGE", session->keys.dlq(), "+", "-", "COUNT", std::to_string(options.limit)},
      stream::entryReplyLimits(session->config.max_event_bytes));
  if (!reply.ok()) return reportRedisError("dlq ls", reply.error(), context);
  auto records = stream::parseEntries(reply->view());
  if (!records.ok()) return reportRedisError("dlq ls", records.error(), context);
  std::vector<dlq::Entry> entries;
  for (stream::StreamEntry& record : *records)
    entries.push_back(dlq::Entry::from(std::move(record)));
  if (options.json) {
    Json list = Json::array();
    for (const dlq::Entry& entry : entries) list.push_back(entryJson(entry));
    context.out << prettyJson(list) << "\n";
  } else if (entries.empty()) {
    context.out << "the dead-letter queue " << session->keys.dlq() << " is empty\n";
    return;
  } else {
    std::vector<std::vector<std::string>> rows = {
        {"ID", "TIMESTAMP", "APP", "HANDLER", "REASON", "ATTEMPTS"}};
    for (const dlq::Entry& entry : entries) {
      rows.push_back({entry.id(), printable(entry.timestamp()), printable(entry.app()),
                      printable(entry.handler()), shorten(entry.reason(), kReasonWidth),
                      std::to_string(entry.handler_attempts)});
    }
    printTable(context.out, rows);
  }
  auto length = session->redis->command({"XLEN", session->keys.dlq()});
  if (length.ok() && length->integer().ok() &&
      *length->integer() > static_cast<long long>(entries.size())) {
    context.err << "note: showing the newest " << entries.size() << " of " << *length->integer()
                << " entries (--limit N shows more)\n";
  }
}

// The event as recorded: pretty-printed, streamed as it is rendered, when it decodes as an event
// (event::decode's limits: at most 64 deep, so neither the stack nor memory grows with what a
// producer wrote); otherwise its first kShownRawBytes bytes, escaped, and why it is no event.
void printEvent(const dlq::Entry& entry, std::ostream& out) {
  constexpr std::size_t kShownRawBytes = 64 * 1024;
  const std::string event(entry.event());
  for (const auto& [name, size] : entry.record.cut) {
    if (name != "event") continue;
    // Read cut (docs/operations.md "Memory"): only its first bytes ever left Redis.
    out << "event (" << size << " bytes, more than a reader keeps; its first " << event.size()
        << " bytes as recorded):\n  " << printable(event) << "\n";
    return;
  }
  auto decoded = event::decode(event);
  if (!decoded.ok()) {
    out << "event (not an event: " << printable(decoded.error().message) << "; as recorded";
    if (event.size() > kShownRawBytes) out << ", its first " << kShownRawBytes << " bytes";
    out << "):\n  " << printable(std::string_view(event).substr(0, kShownRawBytes)) << "\n";
    return;
  }
  out << "event:\n  ";
  event::renderPretty(decoded->root(), [&out](std::string_view piece) {
    if (piece == "\n") {
      out << "\n  ";
    } else {
      out << printable(piece);
    }
  });
  out << "\n";
}

/// The last attempt's output tail (docs/operations.md): one indented line per output line, each
/// escaped like a log line, so a handler's bytes can neither forge lines nor drive the terminal.
void printOutputTail(std::string_view tail, std::ostream& out) {
  out << "output_tail (the last attempt's, its last bytes):\n";
  while (!tail.empty()) {
    const std::size_t end = tail.find('\n');
    out << "  " << printable(tail.substr(0, end), KeepControls::kTab) << "\n";
    tail.remove_prefix(end == std::string_view::npos ? tail.size() : end + 1);
  }
}

void runDlqInspect(const EntryOptions& options, CommandContext& context) {
  if (!validId(options.id, "inspect", context)) return;
  auto session = openRedisSession("dlq inspect", {}, context);
  if (!session) return;
  const auto entry = readEntry(*session, options.id, "inspect", context);
  if (!entry) return;
  if (options.json) {
    context.out << prettyJson(entryJson(*entry)) << "\n";
    return;
  }
  context.out << "id:                " << entry->id() << "\n";
  for (const auto& [name, value] : entry->record.fields) {
    if (name == "event" || name == "output_tail") continue;
    const std::string label = name + ":";
    context.out << label << std::string(label.size() < 19 ? 19 - label.size() : 1, ' ')
                << printable(value) << "\n";
  }
  printEvent(*entry, context.out);
  if (const std::string* tail = entry->outputTail()) printOutputTail(*tail, context.out);
}

void runReplay(const EntryOptions& options, CommandContext& context) {
  if (!validId(options.id, "replay", context)) return;
  auto session =
      openRedisSession("dlq replay", {options.flags.apps, options.flags.runtime}, context);
  if (!session) return;
  const auto entry = readEntry(*session, options.id, "replay", context);
  if (!entry) return;
  // Refused before the apps or the runtime are even looked at: nothing can run.
  if (auto refused = entry->refusal()) {
    context.err << "relay dlq replay: " << printable(*refused) << "\n";
    context.exit_code = kExitUsage;
    return;
  }
  SystemClock clock;
  auto backend = config::makeRuntime(
      session->config.runtime, clock,
      [&context](std::string_view warning) { context.err << "warning: " << warning << "\n"; });
  if (!backend.ok()) {
    context.err << "relay dlq replay: " << backend.error().message << "\n";
    context.exit_code = kExitFailed;
    return;
  }
  auto registry = app::Registry::create({session->config.apps, {}});
  if (!registry.ok()) {
    context.err << "relay dlq replay: " << registry.error().message << "\n";
    context.exit_code = kExitFailed;
    return;
  }
  const auto snapshot = (*registry)->snapshot();
  PrintSink sink(context.out);
  const dlq::ReplayResult replayed =
      dlq::Replayer(*snapshot, **backend)
          .replay(*session->redis, session->keys.dlq(), *entry, sink);
  switch (replayed.verdict) {
    case dlq::ReplayResult::Verdict::kSucceeded:
      context.out << printable(replayed.message) << "\n";
      return;
    case dlq::ReplayResult::Verdict::kRefused:
      context.exit_code = kExitUsage;
      break;
    default:
      context.exit_code = kExitFailed;
      break;
  }
  context.err << "relay dlq replay: " << printable(replayed.message, KeepControls::kTabAndNewline)
              << "\n";
}

void runRm(const EntryOptions& options, CommandContext& context) {
  if (!validId(options.id, "rm", context)) return;
  auto session = openRedisSession("dlq rm", {}, context);
  if (!session) return;
  auto removed = dlq::DeadLetterQueue(*session->redis, session->keys.dlq()).remove({options.id});
  if (!removed.ok()) return reportRedisError("dlq rm", removed.error(), context);
  if (*removed == 0) {
    context.err << "relay dlq rm: no entry " << options.id << " in " << session->keys.dlq() << "\n";
    context.exit_code = kExitFailed;
    return;
  }
  context.out << "removed " << options.id << " from " << session->keys.dlq() << "\n";
}

}  // namespace

void addDlqCommand(CLI::App& root, CommandContext& context) {
  CLI::App* group =
      root.add_subcommand("dlq", "List, inspect, replay and remove dead-letter entries");
  group->require_subcommand(1);

  auto ls = std::make_shared<DlqLsOptions>();
  CLI::App* ls_command = group->add_subcommand(
      "ls", "List entries, newest first: id, timestamp, app, handler, reason, attempts");
  ls_command->add_flag("--json", ls->json, "Print a JSON array: id plus every field per entry");
  ls_command
      ->add_option("--limit", ls->limit,
                   "Show at most N entries (default " + std::to_string(kDefaultLimit) + ")")
      ->type_name("N")
      ->check(CLI::PositiveNumber);
  ls_command->callback([ls, &context] { runDlqLs(*ls, context); });

  auto inspect = std::make_shared<EntryOptions>();
  CLI::App* inspect_command =
      group->add_subcommand("inspect", "Show every field of one entry, the event pretty-printed");
  inspect_command->add_option("ID", inspect->id, "The entry id (from `relay dlq ls`)")->required();
  inspect_command->add_flag("--json", inspect->json, "Print one JSON object");
  inspect_command->callback([inspect, &context] { runDlqInspect(*inspect, context); });

  auto replay = std::make_shared<EntryOptions>();
  auto bulk = std::make_shared<DlqBulkFlags>();
  CLI::App* replay_command = group->add_subcommand(
      "replay",
      "With an ID: run the recorded app/handler once with the recorded event "
      "(RELAY_TRIGGER=replay) here, against the current apps; success removes the entry, failure "
      "keeps it. With a filter instead (--app, --handler, --kind, --reason, --q, --since, "
      "--until): state the count, confirm, and have the workers replay every selected entry "
      "(docs/replay.md \"Dead letters\")");
  addAppFlags(*replay_command, replay->flags);
  replay_command->add_option("ID", replay->id, "The entry id (from `relay dlq ls`)");
  replay_command->add_option("--app", bulk->app, "Bulk: entries of this app")->type_name("NAME");
  replay_command->add_option("--handler", bulk->handler, "Bulk: of this handler");
  replay_command->add_option("--kind", bulk->kind, "Bulk: of this kind (as `relay dlq ls`)");
  replay_command->add_option("--reason", bulk->reason, "Bulk: whose reason contains this text");
  replay_command->add_option("--q", bulk->text, "Bulk: whose event contains this text");
  replay_command->add_option("--since", bulk->since,
                             "Bulk: written since (a duration back from now, RFC 3339, Unix ms)");
  replay_command->add_option("--until", bulk->until, "Bulk: written until (the same forms)");
  replay_command->add_option("--rate", bulk->rate, "Bulk: at most N copies a second")
      ->type_name("N/s");
  replay_command->add_flag("--yes", bulk->yes, "Bulk: replay without asking");
  replay_command->add_flag("--json", bulk->json, "Bulk: progress as JSON lines");
  replay_command->add_flag("--detach", bulk->detach, "Bulk: print the replay's id and return");
  replay_command->callback([replay, bulk, &context] {
    if (!replay->id.empty() && bulk->any()) {
      context.err << "relay dlq replay: an ID or a filter (--app, --handler, ...), not both\n";
      context.exit_code = kExitUsage;
    } else if (!replay->id.empty()) {
      runReplay(*replay, context);
    } else if (bulk->any()) {
      runDlqBulkReplay(*bulk, std::cin, context);
    } else {
      context.err << "relay dlq replay: give an entry ID, or a filter such as --app NAME\n";
      context.exit_code = kExitUsage;
    }
  });

  auto rm = std::make_shared<EntryOptions>();
  CLI::App* rm_command = group->add_subcommand("rm", "Remove one entry");
  rm_command->add_option("ID", rm->id, "The entry id (from `relay dlq ls`)")->required();
  rm_command->callback([rm, &context] { runRm(*rm, context); });
}

}  // namespace relay::cli
