#include <unistd.h>

#include <CLI/CLI.hpp>

#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/json_output.h"
#include "cli/redis_session.h"
#include "cli/table.h"
#include "common/duration.h"
#include "common/rfc3339.h"
#include "common/system_clock.h"
#include "invocation/pending_resolver.h"
#include "stream/pending_inspector.h"
#include "stream/pending_json.h"
#include "stream/stream_id.h"

namespace relay::cli {
namespace {

using Json = nlohmann::ordered_json;

constexpr int kPendingLimit = 100;
constexpr int kPendingPage = 100;
constexpr std::size_t kDetailWidth = 110;

struct PendingLsOptions {
  std::vector<std::string> ids;
  bool json = false;
  int limit = kPendingLimit;
  std::string older_than;
  std::string app;
};

struct ResolveOptions {
  std::vector<std::string> ids;
  bool force = false;
  bool yes = false;
  bool json = false;
};

// Full `<ms>-<seq>` ids (a bare `<ms>` names a range in XPENDING); exit 2 naming the first bad
// one, before anything is read or changed.
bool pendingIds(const std::vector<std::string>& ids, std::string_view command,
                CommandContext& context) {
  for (const std::string& id : ids) {
    if (id.find('-') == std::string::npos || !stream::StreamId::parse(id)) {
      context.err << "relay pending " << command << ": \"" << printable(id)
                  << "\" is not a message id (expected <ms>-<seq>, as `relay pending ls` "
                     "shows); nothing changed\n";
      context.exit_code = kExitUsage;
      return false;
    }
  }
  return true;
}

std::string ageText(std::int64_t ms) {
  return formatDuration(std::chrono::milliseconds(ms / 1000 * 1000));
}

void printReports(const std::vector<stream::PendingReport>& reports, std::ostream& out) {
  std::vector<std::vector<std::string>> rows = {
      {"ID", "AGE", "OWNER", "DELIVERIES", "REASON", "DETAIL"}};
  for (const stream::PendingReport& report : reports) {
    rows.push_back(
        {report.entry.id, ageText(report.age_ms), printable(report.entry.consumer),
         std::to_string(report.entry.deliveries), std::string(stream::kindName(report.reason.kind)),
         shorten(stream::describe(report) +
                     (report.payload_exists == false ? " (its stream entry is gone)" : ""),
                 kDetailWidth)});
  }
  printTable(out, rows);
}

bool owesApp(const stream::PendingReport& report, const std::string& app) {
  if (report.reason.app == app) return true;
  for (const std::string& field : report.plan) {
    if (field.substr(0, field.find('/')) == app) return true;
  }
  return false;
}

void runPendingLs(const PendingLsOptions& options, CommandContext& context) {
  if (!pendingIds(options.ids, "ls", context)) return;
  std::optional<std::chrono::milliseconds> older_than;
  if (!options.older_than.empty()) {
    auto parsed = parseDuration(options.older_than);
    if (!parsed.ok()) {
      context.err << "relay pending ls: --older-than: " << parsed.error().message << "\n";
      context.exit_code = kExitUsage;
      return;
    }
    older_than = *parsed;
  }
  auto session = openRedisSession("pending ls", {}, context);
  if (!session) return;
  const stream::PendingInspector inspector(session->keys);
  std::vector<stream::PendingReport> shown;
  bool more = false;
  if (!options.ids.empty()) {
    auto found = inspector.find(*session->redis, options.ids, /*payloads=*/true);
    if (!found.ok()) return reportRedisError("pending ls", found.error(), context);
    for (std::size_t i = 0; i < options.ids.size(); ++i) {
      if ((*found)[i]) {
        shown.push_back(std::move(*(*found)[i]));
      } else {
        context.err << "relay pending ls: " << options.ids[i] << " is not pending in group "
                    << session->keys.group << " of stream " << session->keys.stream << "\n";
        context.exit_code = kExitFailed;
      }
    }
  } else {
    // Oldest first, page by page: the ages only decrease, so --older-than ends the walk.
    std::string after;
    bool done = false;
    while (!done) {
      auto page = inspector.page(*session->redis, after, kPendingPage, /*payloads=*/true);
      if (!page.ok()) {
        if (redis::isReplyError(page.error(), "NOGROUP")) break;  // no group: nothing pending
        return reportRedisError("pending ls", page.error(), context);
      }
      for (stream::PendingReport& report : *page) {
        if (older_than && report.age_ms < older_than->count()) {
          done = true;
          break;
        }
        if (!options.app.empty() && !owesApp(report, options.app)) continue;
        if (static_cast<int>(shown.size()) == options.limit) {
          more = true;
          done = true;
          break;
        }
        shown.push_back(std::move(report));
      }
      if (page->size() < static_cast<std::size_t>(kPendingPage)) break;
      after = page->back().entry.id;
    }
  }
  if (options.json) {
    Json list = Json::array();
    for (const stream::PendingReport& report : shown) list.push_back(stream::pendingJson(report));
    context.out << prettyJson(list) << "\n";
  } else if (shown.empty() && options.ids.empty()) {
    const bool filtered = older_than || !options.app.empty();
    context.out << (filtered ? "no pending message matches in group " : "nothing pending in group ")
                << session->keys.group << " of stream " << session->keys.stream << "\n";
  } else if (!shown.empty()) {
    printReports(shown, context.out);
  }
  if (more) {
    context.err << "note: showing the oldest " << shown.size()
                << " matching messages; more are pending (--limit N shows more)\n";
  }
}

// On a terminal, unless --yes: what is about to change, and a yes from the operator.
bool confirmed(const ResolveOptions& options, std::string_view command, RedisSession& session,
               CommandContext& context) {
  if (options.yes || ::isatty(STDIN_FILENO) == 0) return true;
  auto found =
      stream::PendingInspector(session.keys).find(*session.redis, options.ids, /*payloads=*/true);
  if (found.ok()) {
    std::vector<stream::PendingReport> listed;
    for (auto& report : *found) {
      if (report) listed.push_back(std::move(*report));
    }
    if (!listed.empty()) printReports(listed, context.err);
  }
  context.err << (command == "ack" ? "acknowledge " : "dead-letter ") << options.ids.size()
              << " message(s) of group " << session.keys.group << " of stream "
              << session.keys.stream << "? [y/N] ";
  context.err.flush();
  std::string answer;
  std::getline(std::cin, answer);
  if (answer == "y" || answer == "Y" || answer == "yes") return true;
  context.err << "relay pending " << command << ": not confirmed: nothing changed\n";
  context.exit_code = kExitFailed;
  return false;
}

std::string kept(std::chrono::milliseconds retention) {
  return retention.count() > 0 ? "retained for " + formatDuration(retention) : "retained";
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

void runResolve(const ResolveOptions& options, invocation::Resolution resolution,
                CommandContext& context) {
  const std::string command =
      resolution == invocation::Resolution::kAcknowledge ? "ack" : "dead-letter";
  if (!pendingIds(options.ids, command, context)) return;
  auto session = openRedisSession("pending " + command, {}, context);
  if (!session) return;
  if (!confirmed(options, command, *session, context)) return;
  SystemClock clock;
  const std::string stamp = formatRfc3339Millis(clock.now());
  const std::chrono::milliseconds retention = session->config.invocation_retention;
  const invocation::PendingResolver resolver(session->keys, retention);
  Json results = Json::array();
  for (const std::string& id : options.ids) {
    auto verdict = resolver.resolve(*session->redis, id, resolution, options.force, stamp);
    Json result = {{"id", id}};
    const auto refuse = [&](const std::string& why) {
      context.err << "relay pending " << command << ": " << id << ": " << why << "\n";
      context.exit_code = kExitFailed;
    };
    if (!verdict.ok()) {
      result["outcome"] = "error";
      result["error"] = verdict.error().message;
      refuse("redis: " + verdict.error().message + " (nothing changed)");
      results.push_back(std::move(result));
      continue;
    }
    using Kind = invocation::ResolveVerdict::Kind;
    switch (verdict->kind) {
      case Kind::kNotPending:
        result["outcome"] = "not_pending";
        refuse("not pending in group " + session->keys.group + " of stream " +
               session->keys.stream + " (nothing changed)");
        break;
      case Kind::kHeld:
        result["outcome"] = "held";
        result["field"] = verdict->field;
        result["claim"] = verdict->claim;
        result["owner"] = verdict->owner;
        result["until_ms"] = verdict->until_ms;
        refuse(verdict->field + " is " + verdict->claim + " by " + verdict->owner +
               " (its claim holds until " +
               formatRfc3339(WallTime(std::chrono::milliseconds(verdict->until_ms))) +
               "): nothing changed; --force " +
               (command == "ack" ? "acknowledges" : "dead-letters") +
               " it anyway (the handler is not stopped, and its outcome then changes nothing)");
        break;
      case Kind::kRetained:
        result["outcome"] = "retained";
        if (!options.json) {
          context.out << id
                      << " had finished (its state is retained): acknowledged, no entry written\n";
        }
        break;
      case Kind::kResolved:
        result["outcome"] = "resolved";
        result["written"] = verdict->written;
        if (options.json) break;
        if (resolution == invocation::Resolution::kAcknowledge) {
          context.out << "acknowledged " << id << " (state " << kept(retention) << ")\n";
        } else if (verdict->written.empty()) {
          context.out << "dead-lettered " << id
                      << ": nothing was owed (every invocation terminal): acknowledged, no entry "
                         "written (state "
                      << kept(retention) << ")\n";
        } else {
          context.out << "dead-lettered " << id << ": " << verdict->written.size() << " entr"
                      << (verdict->written.size() == 1 ? "y" : "ies") << " ("
                      << joined(verdict->written) << ") in " << session->keys.dlq()
                      << "; acknowledged, state " << kept(retention) << "\n";
        }
        break;
    }
    results.push_back(std::move(result));
  }
  if (options.json) context.out << prettyJson(results) << "\n";
}

void addResolve(CLI::App& group, const char* name, const char* help,
                invocation::Resolution resolution, CommandContext& context) {
  auto options = std::make_shared<ResolveOptions>();
  CLI::App* command = group.add_subcommand(name, help);
  command->add_option("ID", options->ids, "Pending message ids (from `relay pending ls`)")
      ->required();
  command->add_flag("--force", options->force,
                    "Even while a live claim holds one of its invocations (the handler is not "
                    "stopped; its outcome then changes nothing)");
  command->add_flag("--yes", options->yes, "Do not ask for confirmation on a terminal");
  command->add_flag("--json", options->json, "Print a JSON array: one result per id");
  command->callback([options, resolution, &context] { runResolve(*options, resolution, context); });
}

}  // namespace

void addPendingCommand(CLI::App& root, CommandContext& context) {
  CLI::App* group = root.add_subcommand(
      "pending", "List the group's pending messages and why each waits; resolve a stuck one");
  group->require_subcommand(1);

  auto ls = std::make_shared<PendingLsOptions>();
  CLI::App* ls_command = group->add_subcommand(
      "ls", "List pending messages, oldest first: id, age, owner, deliveries, why each is pending");
  ls_command->add_option("ID", ls->ids, "Only these message ids");
  ls_command->add_flag("--json", ls->json, "Print a JSON array: one object per message");
  ls_command
      ->add_option("--limit", ls->limit,
                   "Show at most N messages (default " + std::to_string(kPendingLimit) + ")")
      ->type_name("N")
      ->check(CLI::PositiveNumber);
  ls_command
      ->add_option("--older-than", ls->older_than, "Only messages older than this (90s, 1h, 7d)")
      ->type_name("DURATION");
  ls_command->add_option("--app", ls->app, "Only messages that owe an invocation of this app")
      ->type_name("NAME");
  ls_command->callback([ls, &context] { runPendingLs(*ls, context); });

  addResolve(*group, "dead-letter",
             "Write a DLQ entry (kind operator) per invocation each message still owes (one `-` "
             "entry without a plan), then acknowledge it, its state retained",
             invocation::Resolution::kDeadLetter, context);
  addResolve(*group, "ack",
             "Acknowledge each message without a DLQ entry (it is done), its state retained",
             invocation::Resolution::kAcknowledge, context);
}

}  // namespace relay::cli
