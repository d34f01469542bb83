// `relay cancel`: stops invocations wherever they are (docs/pipeline.md "Cancellation",
// docs/cli.md "`relay cancel`"): by invocation, by message, or an app's pending
// messages in a time window. The store's cancel verb does the work in one script per message;
// running attempts are stopped by their worker, which reads the cancels stream.
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/json_output.h"
#include "cli/pattern_command.h"
#include "cli/redis_session.h"
#include "cli/table.h"
#include "common/duration.h"
#include "common/rfc3339.h"
#include "common/system_clock.h"
#include "event/event.h"
#include "invocation/cancel_results.h"
#include "invocation/keys.h"
#include "invocation/redis_lifecycle_store.h"
#include "pattern/evaluator.h"
#include "stream/pending_inspector.h"
#include "stream/stream_entry.h"
#include "stream/stream_id.h"

namespace relay::cli {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kCancelName = "relay cancel";
constexpr int kCancelPage = 100;

struct CancelOptions {
  std::vector<std::string> targets;
  std::string app;
  std::string handler;
  std::string filter;
  std::string since;
  std::string from;
  std::string to;
  bool dead_letter = false;
  bool yes = false;
  bool json = false;
};

// One message to cancel invocations of: `what` is `*` (every one), `<app>/*` or
// `<app>/<handler>`, as CancelRequest::target.
struct Target {
  std::string id;
  std::string what;
};

// The window of an --app selection, as stream ids (inclusive).
struct Window {
  stream::StreamId from{0, 0};
  stream::StreamId to{UINT64_MAX, UINT64_MAX};
};

bool cancelUsage(CommandContext& context, const std::string& message) {
  context.err << kCancelName << ": " << message << "\n";
  context.exit_code = kExitUsage;
  return false;
}

bool cancelMessageId(std::string_view id) {
  return id.find('-') != std::string_view::npos && stream::StreamId::parse(id).has_value();
}

// `<message-id>`, `<message-id>/<app>` or `<message-id>/<app>/<handler>` (as `relay pending
// ls` prints the plan's invocations).
std::optional<Target> parseTarget(const std::string& text, CommandContext& context) {
  const std::size_t slash = text.find('/');
  Target target{text.substr(0, slash), "*"};
  if (!cancelMessageId(target.id)) {
    cancelUsage(context,
                "\"" + printable(text) +
                    "\" is not an invocation (expected <message-id>[/<app>[/<handler>]], the "
                    "message id as <ms>-<seq> as `relay pending ls` shows it); nothing changed");
    return std::nullopt;
  }
  if (slash == std::string::npos) return target;
  const std::string rest = text.substr(slash + 1);
  const std::size_t second = rest.find('/');
  const std::string app = rest.substr(0, second);
  const std::string handler = second == std::string::npos ? "" : rest.substr(second + 1);
  if (app.empty() || app == "*" || (second != std::string::npos && handler.empty())) {
    cancelUsage(context,
                "\"" + printable(text) +
                    "\": expected <message-id>/<app> or <message-id>/<app>/<handler> after "
                    "the message id; nothing changed");
    return std::nullopt;
  }
  target.what = handler.empty() ? app + "/*" : invocation::invocationField(app, handler);
  return target;
}

std::optional<stream::StreamId> windowId(const std::string& text, const char* flag,
                                         CommandContext& context) {
  auto parsed = stream::StreamId::parse(text);
  if (!parsed) {
    cancelUsage(context, std::string(flag) + ": \"" + printable(text) +
                             "\" is not a stream id (expected <ms>-<seq> or <ms>)");
  }
  return parsed;
}

// The checks that need neither Redis nor files: which selection, and a well-formed window.
std::optional<Window> checkSelection(const CancelOptions& options, const Clock& clock,
                                     CommandContext& context) {
  const bool bulk = !options.app.empty();
  if (options.targets.empty() && !bulk) {
    cancelUsage(
        context,
        "name what to cancel: an invocation (<message-id>/<app>/<handler>), a message id, or "
        "--app NAME with a window (--since or --from/--to)");
    return std::nullopt;
  }
  if (!options.targets.empty() && bulk) {
    cancelUsage(context, "invocations or message ids, or --app: not both");
    return std::nullopt;
  }
  const bool windowed = !options.since.empty() || !options.from.empty() || !options.to.empty();
  if (!bulk) {
    if (!options.handler.empty() || !options.filter.empty() || windowed) {
      cancelUsage(context,
                  "--handler, --filter, --since, --from and --to select within --app NAME");
      return std::nullopt;
    }
    return Window{};
  }
  if (options.app.find('/') != std::string::npos) {
    cancelUsage(context, "--app: \"" + printable(options.app) +
                             "\" is an app name (no /); --handler names the handler");
    return std::nullopt;
  }
  if (!windowed) {
    cancelUsage(context,
                "--app needs a window: --since DURATION (1h, 30m) or --from ID and/or --to ID");
    return std::nullopt;
  }
  Window window;
  if (!options.since.empty()) {
    if (!options.from.empty() || !options.to.empty()) {
      cancelUsage(context, "--since or --from/--to: not both");
      return std::nullopt;
    }
    auto since = parseDuration(options.since);
    if (!since.ok() || since->count() <= 0) {
      cancelUsage(context, "--since: \"" + printable(options.since) +
                               "\" is not a positive duration (expected e.g. 90s, 30m, 1h, 7d)");
      return std::nullopt;
    }
    const auto now =
        std::chrono::duration_cast<std::chrono::milliseconds>(clock.now().time_since_epoch());
    window.from = {static_cast<std::uint64_t>(std::max<long long>(0, (now - *since).count())), 0};
    return window;
  }
  if (!options.from.empty()) {
    auto from = windowId(options.from, "--from", context);
    if (!from) return std::nullopt;
    window.from = *from;
  }
  if (!options.to.empty()) {
    auto to = windowId(options.to, "--to", context);
    if (!to) return std::nullopt;
    // A bare <ms> ends the window with that millisecond's last entry.
    window.to =
        options.to.find('-') == std::string::npos ? stream::StreamId{to->ms, UINT64_MAX} : *to;
  }
  if (window.to < window.from) {
    cancelUsage(context, "--from " + options.from + " is after --to " + options.to);
    return std::nullopt;
  }
  return window;
}

std::shared_ptr<const pattern::Pattern> readFilter(const std::string& path,
                                                   CommandContext& context) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    cancelUsage(context, "--filter: cannot read " + path + ": " + std::strerror(errno));
    return nullptr;
  }
  std::stringstream text;
  text << file.rdbuf();
  auto compiled = compilePatternFile(text.str(), path, context);
  if (!compiled)
    cancelUsage(context, "--filter: " + path + " is not a valid pattern; nothing changed");
  return compiled;
}

bool owes(const stream::PendingReport& report, const std::string& app, const std::string& handler) {
  for (const std::string& field : report.plan) {
    if (field.substr(0, field.find('/')) != app) continue;
    if (handler.empty() || field == invocation::invocationField(app, handler)) return true;
  }
  return report.plan.empty() && report.reason.app == app && handler.empty();
}

// Whether message `id`'s event matches `filter`, judged at its publication time (the time in
// its id), as a rule would have judged it.
redis::Result<bool> filterPasses(redis::Connection& redis, const RedisSession& session,
                                 const std::string& id, const pattern::Pattern& filter) {
  auto reply = redis.command({"XRANGE", session.keys.stream, id, id},
                             stream::entryReplyLimits(session.config.max_event_bytes));
  if (!reply.ok()) return reply.error();
  auto entries = stream::parseEntries(reply->view());
  if (!entries.ok()) return entries.error();
  if (entries->empty()) return false;
  const std::string* text = entries->front().find("event");
  if (!text || !entries->front().cut.empty()) return false;
  auto event = event::decode(*text);
  if (!event.ok()) return false;
  const std::int64_t ms = stream::idMillis(id);
  const Instant published{ms / 1000, static_cast<std::int32_t>((ms % 1000) * 1'000'000)};
  return pattern::matches(filter, *event, published);
}

// The pending messages of --app in the window (the PEL holds every one: running, due for a
// retry, parked for flow control or a pause), oldest first.
std::optional<std::vector<Target>> selectPending(const CancelOptions& options, const Window& window,
                                                 const pattern::Pattern* filter,
                                                 RedisSession& session, CommandContext& context) {
  const stream::PendingInspector inspector(session.keys);
  const std::string what = options.handler.empty()
                               ? options.app + "/*"
                               : invocation::invocationField(options.app, options.handler);
  std::vector<Target> selected;
  std::string after;
  while (true) {
    auto page = inspector.page(*session.redis, after, kCancelPage, /*payloads=*/false);
    if (!page.ok()) {
      if (redis::isReplyError(page.error(), "NOGROUP")) break;  // no group: nothing pending
      reportRedisError("cancel", page.error(), context);
      return std::nullopt;
    }
    for (const stream::PendingReport& report : *page) {
      const auto id = stream::StreamId::parse(report.entry.id);
      if (!id || *id < window.from || window.to < *id) continue;
      if (!owes(report, options.app, options.handler)) continue;
      if (filter) {
        auto matched = filterPasses(*session.redis, session, report.entry.id, *filter);
        if (!matched.ok()) {
          reportRedisError("cancel", matched.error(), context);
          return std::nullopt;
        }
        if (!*matched) continue;
      }
      selected.push_back({report.entry.id, what});
    }
    if (page->size() < static_cast<std::size_t>(kCancelPage)) break;
    after = page->back().entry.id;
  }
  return selected;
}

// A bulk selection is confirmed by the operator on a terminal, or by --yes (never implied).
bool confirmedCancel(const CancelOptions& options, std::size_t count, const RedisSession& session,
                     CommandContext& context) {
  if (options.yes) return true;
  const std::string what =
      "cancel the invocations of " +
      (options.handler.empty() ? "app " + options.app : options.app + "/" + options.handler) +
      " in " + std::to_string(count) + " pending message(s) of group " + session.keys.group +
      " of stream " + session.keys.stream;
  if (::isatty(STDIN_FILENO) == 0) {
    context.err << kCancelName << ": " << what
                << " needs confirmation: pass --yes (stdin is not a terminal); nothing changed\n";
    context.exit_code = kExitFailed;
    return false;
  }
  context.err << what << (options.dead_letter ? ", each with a DLQ entry" : "") << "? [y/N] ";
  context.err.flush();
  std::string answer;
  std::getline(std::cin, answer);
  if (answer == "y" || answer == "Y" || answer == "yes") return true;
  context.err << kCancelName << ": not confirmed: nothing changed\n";
  context.exit_code = kExitFailed;
  return false;
}

// What `relay cancel` prints for one result (the `--json` names are cancel_results.h's).
std::string resultText(const invocation::CancelResult& result, bool dead_letter) {
  const std::string entry = dead_letter ? " (a worker writes its DLQ entry, reason cancelled)" : "";
  if (result.result == "cancelled") return "cancelled before it started" + entry;
  if (result.result == "stopping") {
    return "running: stop sent to its worker (SIGTERM, SIGKILL after the grace)" + entry;
  }
  if (result.result == "orphaned") {
    return "its worker is gone: cancelled when its claim is taken over" + entry;
  }
  if (result.result == "requested") return "not started yet: cancelled when a worker reads it";
  if (result.result == "error") return "redis: " + result.error;
  if (result.result == "not_found") {
    return result.invocation == "*"
               ? "not found: no such message in the stream"
               : "not found: no such message, or it owes no invocation " + result.invocation;
  }
  return "already finished: nothing to cancel";
}

// Cancels one target and reports each invocation; false when it was not found or failed.
bool cancelOne(invocation::LifecycleStore& store, const Target& target,
               const CancelOptions& options, const std::string& cancel_id, Json& results,
               CommandContext& context) {
  invocation::CancelRequest request;
  request.target = target.what;
  request.dead_letter = options.dead_letter;
  request.id = cancel_id;
  bool found = true;
  bool acknowledged = false;
  for (const invocation::CancelResult& result :
       invocation::cancelResults(target.id, target.what, store.cancel(target.id, request))) {
    found = found && !invocation::cancelFailed(result);
    acknowledged = acknowledged || result.acknowledged;
    Json row = {{"message_id", result.message_id},
                {"invocation", result.invocation},
                {"result", result.result}};
    if (result.acknowledged) row["acknowledged"] = true;
    if (!result.error.empty()) row["error"] = result.error;
    results.push_back(std::move(row));
    if (options.json) continue;
    const std::string shown =
        result.invocation == "*" ? result.message_id : result.message_id + "/" + result.invocation;
    context.out << printable(shown) << ": "
                << resultText(result, options.dead_letter && result.result != "finished") << "\n";
  }
  if (acknowledged && !options.json) {
    context.out << target.id << ": every invocation terminal: acknowledged\n";
  }
  return found;
}

void runCancel(const CancelOptions& options, const Clock& clock, CommandContext& context) {
  const auto window = checkSelection(options, clock, context);
  if (!window) return;
  std::vector<Target> targets;
  for (const std::string& text : options.targets) {
    auto target = parseTarget(text, context);
    if (!target) return;
    targets.push_back(std::move(*target));
  }
  std::shared_ptr<const pattern::Pattern> filter;
  if (!options.filter.empty()) {
    filter = readFilter(options.filter, context);
    if (!filter) return;
  }
  auto session = openRedisSession("cancel", {}, context);
  if (!session) return;
  if (!options.app.empty()) {
    auto selected = selectPending(options, *window, filter.get(), *session, context);
    if (!selected) return;
    if (selected->empty()) {
      if (options.json) {
        context.out << "[]\n";
      } else {
        context.out << "nothing to cancel: no pending message of app " << options.app
                    << " in the window\n";
      }
      return;
    }
    if (!confirmedCancel(options, selected->size(), *session, context)) return;
    targets = std::move(*selected);
  }
  invocation::RedisStoreSettings settings;
  settings.keys = session->keys;
  settings.consumer = "relay-cancel";
  settings.retention = session->config.invocation_retention;
  SystemClock store_clock;
  invocation::RedisLifecycleStore store(settings, session->config.redis, store_clock);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(clock.now().time_since_epoch()).count();
  // Named in the workers' logs and the state: which request stopped what.
  const std::string cancel_id = "cli-" + std::to_string(ms) + "-" + std::to_string(::getpid());
  Json results = Json::array();
  bool all = true;
  for (const Target& target : targets) {
    all = cancelOne(store, target, options, cancel_id, results, context) && all;
  }
  if (options.json) context.out << prettyJson(results) << "\n";
  if (!all) context.exit_code = kExitFailed;
}

}  // namespace

void addCancelCommand(CLI::App& root, CommandContext& context) {
  auto options = std::make_shared<CancelOptions>();
  CLI::App* command = root.add_subcommand(
      "cancel",
      "Cancel invocations: a running handler is stopped on its worker (SIGTERM, then SIGKILL), "
      "a pending one never starts; cancelled is terminal (never retried)");
  command->add_option("INVOCATION", options->targets,
                      "<message-id>/<app>/<handler> (one invocation), <message-id>/<app>, or a "
                      "message id (every invocation of the message)");
  command->add_option("--app", options->app, "Cancel this app's pending messages in a window")
      ->type_name("NAME");
  command->add_option("--handler", options->handler, "With --app: only this handler")
      ->type_name("HANDLER");
  command
      ->add_option("--filter", options->filter,
                   "With --app: only messages whose event matches this pattern file (the map "
                   "under pattern:, judged at the message's publication time)")
      ->type_name("PATTERN_FILE");
  command->add_option("--since", options->since, "With --app: messages of the last DURATION")
      ->type_name("DURATION");
  command->add_option("--from", options->from, "With --app: messages from this stream id")
      ->type_name("ID");
  command->add_option("--to", options->to, "With --app: messages up to this stream id")
      ->type_name("ID");
  command->add_flag("--dead-letter", options->dead_letter,
                    "Write a DLQ entry (reason cancelled) for each cancelled invocation");
  command->add_flag("--yes", options->yes, "Do not ask for confirmation of an --app selection");
  command->add_flag("--json", options->json, "Print a JSON array: one result per invocation");
  command->callback([options, &context] {
    const SystemClock clock;
    runCancel(*options, clock, context);
  });
}

}  // namespace relay::cli
