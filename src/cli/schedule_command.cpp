// `relay schedule backfill APP SCHEDULE`: publishes the missed occurrences of a past window
// (catalog/schedule_backfill.h; docs/schedules.md "Backfill", docs/cli.md "relay schedule
// backfill").
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "app/names.h"
#include "catalog/schedule_backfill.h"
#include "cli/loaded_apps.h"
#include "cli/redis_session.h"
#include "common/duration.h"
#include "common/printable.h"
#include "common/rfc3339.h"
#include "common/system_clock.h"

namespace relay::cli {
namespace {
// Named apart: the files of relay_cli share unity batches and their anonymous namespaces.
namespace backfill {

using Json = nlohmann::ordered_json;
using catalog::BackfillItem;
using catalog::BackfillOutcome;
using catalog::BackfillPlan;
using catalog::OverlapPolicy;

constexpr const char* kName = "relay schedule backfill";
/// A backfill that would publish more occurrences than this asks first (docs/schedules.md
/// "Backfill"): a window or a cron mistyped by a factor of 60 should not start thousands of
/// handlers.
constexpr std::size_t kConfirmAbove = 100;

struct BackfillOptions {
  AppFlags flags;
  std::string app;
  std::string schedule;
  std::string from;
  std::string to = "now";
  std::string overlap = "skip";
  bool dry_run = false;
  bool yes = false;
  bool json = false;
};

void usageError(const std::string& message, CommandContext& context) {
  context.err << kName << ": " << message << "; nothing published\n";
  context.exit_code = kExitUsage;
}

// `now`, an RFC 3339 time, or a duration meaning that long before now (as `--since` reads it).
std::optional<WallTime> parseTime(const std::string& flag, const std::string& text, WallTime now,
                                  CommandContext& context) {
  if (text == "now") return now;
  if (const std::optional<Instant> instant = parseRfc3339(text)) {
    using std::chrono::nanoseconds;
    using std::chrono::seconds;
    const auto limit = std::chrono::floor<seconds>(WallTime::max().time_since_epoch()).count();
    if (instant->seconds < limit && instant->seconds > -limit) {
      return WallTime{std::chrono::duration_cast<WallTime::duration>(seconds(instant->seconds) +
                                                                     nanoseconds(instant->nanos))};
    }
    usageError(flag + " \"" + printable(text) +
                   "\" is outside the times Relay handles (1677-09-22 to 2262-04-11)",
               context);
    return std::nullopt;
  }
  if (auto ago = parseDuration(text); ago.ok()) return now - *ago;
  usageError(flag + " \"" + printable(text) +
                 "\" is not a time: expected an RFC 3339 time (2026-12-05T01:00:00Z, "
                 "2026-12-05T02:00:00+01:00), a duration before now (90m, 6h, 1d12h) or now",
             context);
  return std::nullopt;
}

const char* outcomeName(BackfillOutcome outcome) {
  switch (outcome) {
    case BackfillOutcome::kWouldPublish:
      return "would_publish";
    case BackfillOutcome::kPublished:
      return "published";
    case BackfillOutcome::kAlreadyPublished:
      return "already_published";
    case BackfillOutcome::kSkippedUnfinished:
    case BackfillOutcome::kSkippedOverlap:
      return "skipped";
  }
  return "?";
}

std::string overlapped(const catalog::UnfinishedOccurrence& other) {
  return formatRfc3339(other.scheduled_at) +
         (other.message_id.empty() ? "" : " (" + other.message_id + ")");
}

// What the line of an item says after its time and outcome.
std::string detail(const BackfillItem& item, const std::string& group, bool done) {
  switch (item.outcome) {
    case BackfillOutcome::kWouldPublish:
      return done ? "not published (redis failed before it)" : "would publish";
    case BackfillOutcome::kPublished:
      return "published as " + item.message_id;
    case BackfillOutcome::kAlreadyPublished:
      return "already published as " + item.message_id;
    case BackfillOutcome::kSkippedUnfinished:
      return "skipped: the occurrence of " + overlapped(*item.overlaps) + " is unfinished (" +
             (item.overlaps->delivered ? "pending in group " : "not read yet by group ") + group +
             ")";
    case BackfillOutcome::kSkippedOverlap:
      return "skipped: it would overlap " + overlapped(*item.overlaps) + ", " +
             (done ? "published" : "to be published") + " by this backfill";
  }
  return "";
}

Json itemJson(const BackfillItem& item) {
  Json line = {{"type", "occurrence"},
               {"scheduled_at", item.occurrence.scheduledAtText()},
               {"occurrence_id", item.occurrence.id()},
               {"outcome", outcomeName(item.outcome)}};
  if (!item.message_id.empty()) line["message_id"] = item.message_id;
  if (item.overlaps) {
    line["reason"] = item.outcome == BackfillOutcome::kSkippedUnfinished ? "unfinished" : "overlap";
    Json other = {{"scheduled_at", formatRfc3339(item.overlaps->scheduled_at)}};
    if (!item.overlaps->message_id.empty()) other["message_id"] = item.overlaps->message_id;
    if (item.outcome == BackfillOutcome::kSkippedUnfinished) {
      other["delivered"] = item.overlaps->delivered;
    }
    line["overlaps"] = std::move(other);
  }
  return line;
}

std::size_t skipped(const BackfillPlan& plan) {
  return plan.count(BackfillOutcome::kSkippedUnfinished) +
         plan.count(BackfillOutcome::kSkippedOverlap);
}

void printPlan(const BackfillOptions& options, const BackfillPlan& plan, const std::string& group,
               bool done, CommandContext& context) {
  for (const BackfillItem& item : plan.items) {
    if (options.json) {
      context.out << itemJson(item).dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
    } else {
      context.out << item.occurrence.scheduledAtText() << "  " << detail(item, group, done) << "\n";
    }
  }
}

void printSummary(const BackfillOptions& options, const BackfillPlan& plan, WallTime from,
                  WallTime to, bool done, CommandContext& context) {
  const std::size_t would = plan.count(BackfillOutcome::kWouldPublish);
  if (options.json) {
    Json summary = {{"type", "summary"},
                    {"app", options.app},
                    {"schedule", options.schedule},
                    {"from", formatRfc3339Millis(from)},
                    {"to", formatRfc3339Millis(to)},
                    {"overlap", options.overlap},
                    {"dry_run", options.dry_run},
                    {"occurrences", plan.items.size()},
                    {"published", plan.count(BackfillOutcome::kPublished)},
                    {"already_published", plan.count(BackfillOutcome::kAlreadyPublished)},
                    {"skipped", skipped(plan)}};
    summary[done ? "not_published" : "would_publish"] = would;
    context.out << summary.dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
    return;
  }
  if (plan.items.empty()) {
    context.out << "no occurrence of " << options.app << "/" << options.schedule
                << " falls in the window: nothing to publish\n";
    return;
  }
  if (done) {
    context.out << "published " << plan.count(BackfillOutcome::kPublished);
  } else {
    context.out << "dry run: would publish " << would;
  }
  context.out << ", already published " << plan.count(BackfillOutcome::kAlreadyPublished)
              << ", skipped " << skipped(plan);
  if (done && would > 0) context.out << ", not published " << would;
  if (skipped(plan) > 0) {
    context.out << " (--overlap skip: "
                << (plan.unfinished ? "run it again once the unfinished occurrence has ended"
                                    : "run it again once the published one has ended")
                << ", or --overlap all publishes every missing one)";
  }
  context.out << "\n";
}

// Above kConfirmAbove: asks on a terminal unless --yes; refuses without a terminal.
bool confirmed(const BackfillOptions& options, std::size_t count, CommandContext& context) {
  if (count <= kConfirmAbove || options.yes) return true;
  if (::isatty(STDIN_FILENO) == 0) {
    context.err << kName << ": this would publish " << count << " occurrences of " << options.app
                << "/" << options.schedule << " (more than " << kConfirmAbove
                << "): pass --yes to publish them; nothing published\n";
    context.exit_code = kExitFailed;
    return false;
  }
  context.err << "publish " << count << " occurrences of " << options.app << "/" << options.schedule
              << "? [y/N] ";
  context.err.flush();
  std::string answer;
  std::getline(std::cin, answer);
  if (answer == "y" || answer == "Y" || answer == "yes") return true;
  context.err << kName << ": not confirmed: nothing published\n";
  context.exit_code = kExitFailed;
  return false;
}

const app::Schedule* findSchedule(const app::AppEntry& entry, const std::string& name,
                                  CommandContext& context) {
  if (const app::Schedule* found = entry.app->findSchedule(name)) return found;
  std::string known;
  for (const app::Schedule& schedule : entry.app->schedules) {
    known += (known.empty() ? "" : ", ") + schedule.name;
  }
  context.err << kName << ": app " << entry.name << " has no schedule named \"" << name
              << "\" (schedules: " << (known.empty() ? "none" : known) << "); nothing published\n";
  context.exit_code = kExitFailed;
  return nullptr;
}

void run(const BackfillOptions& options, CommandContext& context) {
  for (const auto& [what, name] :
       {std::pair{"app", &options.app}, std::pair{"schedule", &options.schedule}}) {
    if (!app::isValidName(*name)) {
      return usageError(std::string("\"") + printable(*name) + "\" is not " + what +
                            " name (expected " + std::string(app::kNamePattern) + ")",
                        context);
    }
  }
  const OverlapPolicy overlap =
      options.overlap == "all" ? OverlapPolicy::kAll : OverlapPolicy::kSkip;
  if (options.overlap != "all" && options.overlap != "skip") {
    return usageError("--overlap \"" + printable(options.overlap) + "\": expected skip or all",
                      context);
  }
  SystemClock clock;
  const WallTime now = clock.now();
  const std::optional<WallTime> from = parseTime("--from", options.from, now, context);
  if (!from) return;
  const std::optional<WallTime> to = parseTime("--to", options.to, now, context);
  if (!to) return;
  if (*from > now) {
    return usageError("--from " + formatRfc3339Millis(*from) + " is in the future (now is " +
                          formatRfc3339Millis(now) +
                          "): a backfill publishes occurrences that were due, the scheduler "
                          "publishes the rest",
                      context);
  }
  if (*to > now) {
    return usageError("--to " + formatRfc3339Millis(*to) + " is in the future (now is " +
                          formatRfc3339Millis(now) +
                          "): a backfill publishes occurrences that were due (--to now, or "
                          "leave it out)",
                      context);
  }
  if (*from > *to) {
    return usageError("--from " + formatRfc3339Millis(*from) + " is after --to " +
                          formatRfc3339Millis(*to) + ": expected --from <= --to",
                      context);
  }
  const auto ttl = catalog::kOccurrenceRecordTtl;
  if (*from <= now - ttl) {
    return usageError(
        "--from " + formatRfc3339Millis(*from) + " is " + formatDuration(ttl) +
            " or more ago (now is " + formatRfc3339Millis(now) +
            "): an occurrence's record lasts " + formatDuration(ttl) +
            ", and without it a published occurrence cannot be told from a missed one "
            "(docs/schedules.md \"Backfill\"); expected --from after " +
            formatRfc3339Millis(now - ttl),
        context);
  }

  auto config =
      loadCommandConfig("schedule backfill", {options.flags.apps, options.flags.runtime}, context);
  if (!config) return;
  const std::optional<std::filesystem::path> root =
      appsRoot(options.flags, "schedule backfill", context);
  if (!root) return;
  auto snapshot = loadTemplates(*root);
  if (!snapshot.ok()) {
    context.err << kName << ": " << snapshot.error().message << "\n";
    context.exit_code = kExitFailed;
    return;
  }
  const app::AppEntry* entry = findLoadedApp(**snapshot, options.app, "schedule backfill", context);
  if (entry == nullptr) return;
  const app::Schedule* schedule = findSchedule(*entry, options.schedule, context);
  if (schedule == nullptr) return;

  auto session = connectRedisSession("schedule backfill", std::move(*config), context);
  if (!session) return;
  const catalog::ScheduleBackfill backfill(
      {session->keys.stream, session->keys.group, catalog::kOccurrenceRecordTtl});
  auto plan = backfill.plan(*session->redis, options.app, *schedule, *from, *to, overlap, now);
  if (!plan.ok()) {
    context.err << kName << ": " << plan.error().message << "; nothing published\n";
    context.exit_code = kExitFailed;
    return;
  }
  if (!options.json) {
    context.out << "backfill of " << options.app << "/" << options.schedule << " (cron \""
                << schedule->cron_text << "\", " << schedule->time_zone.name() << ") from "
                << formatRfc3339Millis(*from) << " to " << formatRfc3339Millis(*to) << ": "
                << plan->items.size() << " occurrence" << (plan->items.size() == 1 ? "" : "s")
                << ", --overlap " << options.overlap << (options.dry_run ? ", dry run" : "")
                << "\n";
  }
  const std::size_t to_publish = plan->count(BackfillOutcome::kWouldPublish);
  if (options.dry_run || to_publish == 0) {
    // Nothing missing (or everything held back) is a finished backfill unless it is a dry run.
    printPlan(options, *plan, session->keys.group, !options.dry_run, context);
    printSummary(options, *plan, *from, *to, !options.dry_run, context);
    return;
  }
  if (!confirmed(options, to_publish, context)) return;
  const relay::Status published = backfill.publish(*session->redis, *schedule, *plan);
  printPlan(options, *plan, session->keys.group, true, context);
  printSummary(options, *plan, *from, *to, true, context);
  if (!published.ok()) {
    context.err << kName << ": redis: " << published.error().message << " ("
                << plan->count(BackfillOutcome::kWouldPublish)
                << " occurrences not published; running the backfill again publishes them)\n";
    context.exit_code = kExitFailed;
  }
}

}  // namespace backfill
}  // namespace

void addScheduleCommand(CLI::App& root, CommandContext& context) {
  CLI::App* group = root.add_subcommand("schedule", "Work with the schedules of apps");
  group->require_subcommand(1);
  auto options = std::make_shared<backfill::BackfillOptions>();
  CLI::App* command = group->add_subcommand(
      "backfill",
      "Publish the occurrences of a past window that were never published (at most 48h back)");
  command->add_option("APP", options->app, "The app")->required();
  command->add_option("SCHEDULE", options->schedule, "The schedule's name")->required();
  command
      ->add_option("--from", options->from,
                   "Start of the window, inclusive: RFC 3339, a duration before now (6h), or now")
      ->required();
  command->add_option("--to", options->to,
                      "End of the window, inclusive (default now): RFC 3339, a duration before "
                      "now, or now");
  command->add_option("--overlap", options->overlap,
                      "skip (default): publish nothing while an occurrence of the schedule is "
                      "unfinished, else only the earliest missing one; all: every missing one");
  command->add_flag("--dry-run", options->dry_run, "List what would happen; publish nothing");
  command->add_flag("--yes", options->yes,
                    "Publish more than 100 occurrences without asking for confirmation");
  command->add_flag("--json", options->json,
                    "Print JSON Lines: one object per occurrence, then a summary");
  addAppFlags(*command, options->flags);
  command->callback([options, &context] { backfill::run(*options, context); });
}

}  // namespace relay::cli
