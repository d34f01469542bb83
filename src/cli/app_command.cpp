#include <CLI/CLI.hpp>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "app/app_description.h"
#include "app/registry.h"
#include "cli/app_flags.h"
#include "cli/command.h"
#include "cli/json_output.h"
#include "cli/loaded_apps.h"
#include "cli/table.h"
#include "common/duration.h"
#include "common/printable.h"
#include "common/size.h"
#include "common/system_clock.h"
#include "pattern/pattern.h"

namespace relay::cli {
namespace {

using Json = nlohmann::ordered_json;

struct LsOptions {
  AppFlags flags;
  bool json = false;
};

struct InspectOptions {
  AppFlags flags;
  std::string name;
  bool json = false;
};

constexpr std::size_t kNextFireTimes = 3;
std::string yesNo(bool value) { return value ? "yes" : "no"; }

// docs/apps.md "Deadlines": the line `relay app inspect` prints when a rule or schedule has one.
std::string deadlines(Millis deadline, Millis start_timeout) {
  if (deadline.count() == 0 && start_timeout.count() == 0) return {};
  std::string line = "      deadline: ";
  line += deadline.count() > 0 ? formatDuration(deadline) : "none";
  if (start_timeout.count() > 0) line += ", start_timeout: " + formatDuration(start_timeout);
  return line + "\n";
}

std::string formatCpus(double cpus) {
  std::ostringstream out;
  out << cpus;
  return out.str();
}

void printIgnored(const app::Snapshot& snapshot, CommandContext& context) {
  for (const app::IgnoredDir& dir : snapshot.ignored()) {
    context.err << "note: " << printable(dir.dir.string())
                << " is not an app: " << printable(dir.reason) << "\n";
  }
}

std::string runtimeText(const app::AppEntry& entry) {
  return entry.runtime ? std::string(runtime::languageName(*entry.runtime)) : "-";
}

void runLs(const LsOptions& options, CommandContext& context) {
  // Availability includes the runtime's verdict (handler files, bwrap, image...).
  SystemClock clock;
  const auto loaded = loadApps(options.flags, "app ls", clock, context);
  if (!loaded) return;
  const auto& registry = loaded->registry;
  if (!registry) return;
  const auto snapshot = registry->snapshot();
  printIgnored(*snapshot, context);
  const std::optional<std::set<std::string>> paused = pausedApps(options.flags, context);
  if (options.json) {
    Json list = Json::array();
    for (const app::AppEntry& entry : snapshot->apps()) {
      Json row = app::appSummaryJson(entry);
      const app::AppStatus shown = clusterStatus(entry, paused);
      row["available"] = shown.available;
      row["reason"] = shown.reason;
      row["paused"] = paused ? Json(paused->count(entry.name) > 0) : Json();
      list.push_back(std::move(row));
    }
    context.out << prettyJson(list) << "\n";
    return;
  }
  std::vector<std::vector<std::string>> rows = {
      {"NAME", "RUNTIME", "RULES", "SCHEDULES", "LOADED", "AVAILABLE", "REASON"}};
  for (const app::AppEntry& entry : snapshot->apps()) {
    const app::AppStatus shown = clusterStatus(entry, paused);
    rows.push_back({entry.name, runtimeText(entry),
                    entry.app ? std::to_string(entry.app->rules.size()) : "-",
                    entry.app ? std::to_string(entry.app->schedules.size()) : "-",
                    yesNo(shown.loaded), yesNo(shown.available), shown.reason});
  }
  printTable(context.out, rows);
  if (snapshot->apps().empty()) {
    context.err << "note: no directory in " << printable(snapshot->root().string())
                << " holds a template.yaml\n";
  }
}

// Everything but the layout comes from the template (its author's text): each line is
// printed through printable(), escaped as log lines are (docs/operations.md "Logs").
void printInspectLines(const app::AppEntry& entry, WallTime now, std::ostream& out);

void printInspect(const app::AppEntry& entry, WallTime now, std::ostream& terminal) {
  std::ostringstream lines;
  printInspectLines(entry, now, lines);
  std::istringstream in(lines.str());
  for (std::string line; std::getline(in, line);) terminal << printable(line) << "\n";
}

void printInspectLines(const app::AppEntry& entry, WallTime now, std::ostream& out) {
  const app::App& app = *entry.app;
  out << "name:         " << app.name << "\n"
      << "dir:          " << entry.dir.string() << "\n"
      << "runtime:      " << runtime::languageName(app.runtime) << "\n"
      << "image:        " << app.image
      << (entry.status.image_digest.empty() ? "" : " (" + entry.status.image_digest + ")") << "\n"
      << "concurrency:  " << app.concurrency << "\n"
      << "throttle:     "
      << (app.throttle ? app::describeRate(*app.throttle) + " (the whole app)"
                       : std::string("(none)"))
      << "\n"
      << "network:      " << (app.network ? "true" : "false") << "\n"
      << "env:         ";
  if (app.env.empty()) out << " (none)\n";
  for (std::size_t i = 0; i < app.env.size(); ++i) {
    out << (i == 0 ? " " : "              ") << app.env[i].first << "=" << app.env[i].second
        << "\n";
  }
  out << "resources:    memory " << formatSize(app.resources.memory_bytes) << ", cpus "
      << formatCpus(app.resources.cpus) << ", pids " << app.resources.pids << "\n"
      << "loaded:       " << yesNo(entry.status.loaded) << "\n"
      << "available:    " << yesNo(entry.status.available)
      << (entry.status.reason.empty() ? "" : " (" + entry.status.reason + ")") << "\n";
  for (const app::Diagnostic& diagnostic : entry.errors) {
    out << "error:        " << diagnostic.toString() << "\n";
  }
  out << "rules:        " << app.rules.size() << "\n";
  for (std::size_t i = 0; i < app.rules.size(); ++i) {
    const app::Rule& rule = app.rules[i];
    out << "  [" << i << "] " << rule.handler << "  (template.yaml line " << rule.line << ")\n"
        << "      pattern:  " << rule.pattern->toString() << "\n"
        << "      timeout:  " << formatDuration(rule.timeout) << ", retries: " << rule.retries
        << "\n"
        << deadlines(rule.deadline, rule.start_timeout);
    for (const std::string& line : app::describeFlow(rule.flow)) {
      out << "      " << line << "\n";
    }
  }
  out << "schedules:    " << app.schedules.size() << "\n";
  for (std::size_t i = 0; i < app.schedules.size(); ++i) {
    const app::Schedule& schedule = app.schedules[i];
    out << "  [" << i << "] " << schedule.name << "  (template.yaml line " << schedule.line << ")\n"
        << "      cron:     " << schedule.cron_text << " (" << schedule.time_zone.name() << ")\n"
        << "      handler:  " << schedule.handler << "\n"
        << "      timeout:  " << formatDuration(schedule.timeout)
        << ", retries: " << schedule.retries << "\n"
        << deadlines(schedule.deadline, schedule.start_timeout)
        << "      payload:  " << schedule.payload_json << "\n";
    const std::vector<app::FireTime> fires = app::nextFires(schedule, now, kNextFireTimes);
    if (fires.empty()) out << "      next:     never (no firing within 5 years)\n";
    for (std::size_t f = 0; f < fires.size(); ++f) {
      out << (f == 0 ? "      next:     " : "                ") << fires[f].utc << "  "
          << fires[f].local << " " << schedule.time_zone.name() << "\n";
    }
  }
  // docs/replay.md "Archive": what it keeps; its size and lag are `relay stats`'.
  if (!app.archive) {
    out << "archive:      (none)\n";
  } else {
    out << "archive:      retention " << formatDuration(app.archive->retention) << ", keeps "
        << (app.archive->pattern ? "events matching " + app.archive->pattern->toString()
                                 : std::string("events a rule matches"))
        << "\n";
  }
}

void runInspect(const InspectOptions& options, CommandContext& context) {
  // Availability includes the runtime's verdict (handler files, bwrap, image...).
  SystemClock clock;
  const auto loaded = loadApps(options.flags, "app inspect", clock, context);
  if (!loaded) return;
  const auto& registry = loaded->registry;
  if (!registry) return;
  const auto snapshot = registry->snapshot();
  const app::AppEntry* entry = findLoadedApp(*snapshot, options.name, "app inspect", context);
  if (entry == nullptr) return;
  const WallTime now = SystemClock().now();
  if (options.json) {
    context.out << prettyJson(app::appDetailJson(*entry, now)) << "\n";
  } else {
    printInspect(*entry, now, context.out);
  }
}

}  // namespace

void addAppCommand(CLI::App& root, CommandContext& context) {
  CLI::App* group = root.add_subcommand("app", "List and inspect the apps of an apps root");
  group->require_subcommand(1);

  auto ls = std::make_shared<LsOptions>();
  CLI::App* ls_command = group->add_subcommand(
      "ls", "List apps: runtime, rule and schedule counts, loaded/available and why not");
  addAppFlags(*ls_command, ls->flags);
  ls_command->add_flag("--json", ls->json, "Print a JSON array of objects");
  ls_command->callback([ls, &context] { runLs(*ls, context); });

  auto inspect = std::make_shared<InspectOptions>();
  CLI::App* inspect_command = group->add_subcommand(
      "inspect",
      "Show an app's effective configuration (defaults filled in), its rules' patterns and "
      "each schedule's next fire times");
  addAppFlags(*inspect_command, inspect->flags);
  inspect_command->add_option("NAME", inspect->name, "The app (its directory name)")->required();
  inspect_command->add_flag("--json", inspect->json, "Print one JSON object");
  inspect_command->callback([inspect, &context] { runInspect(*inspect, context); });
}

}  // namespace relay::cli
