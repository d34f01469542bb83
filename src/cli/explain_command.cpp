// `relay app explain NAME --event ...`: each rule of an app against one event, with the first
// failing condition of the rules that do not match (docs/patterns.md "Why an event does not
// match").
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "app/app_description.h"
#include "catalog/flow_gates.h"
#include "catalog/message_decoder.h"
#include "cli/explanation_json.h"
#include "cli/json_output.h"
#include "cli/loaded_apps.h"
#include "cli/redis_session.h"
#include "common/rfc3339.h"
#include "common/system_clock.h"
#include "pattern/explain.h"

namespace relay::cli {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kCommand = "app explain";

struct ExplainOptions {
  AppFlags flags;
  std::string name;
  std::string event;  // JSON, @FILE; empty: stdin
  std::string now;    // RFC 3339; empty: the clock
  bool json = false;
};

// One flow-control limit that applies to a matching rule (docs/apps.md "Flow control").
struct AppliedLimit {
  std::string text;  // `concurrency: 2 at a time per tenant_id (this event: "acme")`
  Json json;
};

// How the event keys a gate: its value, that the field is missing (a key of its own), or, for a
// gate the worker leaves out for this event (a dedupe without its key), that it does not apply.
std::string keyNote(const std::string& value, const app::KeyPath& key, bool applies) {
  if (!applies) return " (this event has no " + key.text + ": never deduplicated)";
  if (value == invocation::kMissingKeyValue) {
    return " (this event has no " + key.text + ": it shares the key \"-\")";
  }
  return " (this event: " + value + ")";
}

// Every limit on an invocation of `rule` for `event`: the app's throttle (one bucket for the
// whole app), then the rule's own gates, each keyed one with the key value the event gives it.
// What applies and with which value is the worker's own plan (catalog::flowControl); the rule's
// text says how each is described.
std::vector<AppliedLimit> appliedLimits(const app::App& app, const app::Rule& rule,
                                        const event::Event& event) {
  std::vector<AppliedLimit> out;
  const auto throttle = [&out](const app::ThrottleRule& rate, std::string_view scope) {
    Json json = {{"kind", "throttle"}, {"scope", scope}};
    json.update(app::throttleJson(rate));
    out.push_back({"throttle: " + app::describeRate(rate) +
                       (scope == "app" ? " (the whole app)" : " (this rule)"),
                   std::move(json)});
  };
  if (app.throttle) throttle(*app.throttle, "app");
  const app::FlowRules& flow = rule.flow;
  if (flow.throttle) throttle(*flow.throttle, "rule");
  const invocation::FlowControl planned = catalog::flowControl(app, rule, event);
  // Each keyed gate alone, so describeFlow() and flowJson() describe just it.
  const auto add = [&](auto member, std::string_view kind, const auto& gate_planned) {
    const auto& gate = flow.*member;
    if (!gate) return;
    app::FlowRules only;
    only.*member = gate;
    const bool applies = gate_planned.has_value();
    const std::string value =
        applies ? gate_planned->value : std::string(invocation::kMissingKeyValue);
    Json json = {{"kind", kind}, {"scope", "rule"}};
    json.update(app::flowJson(only)[std::string(kind)]);
    json["key_value"] = value;
    json["key_missing"] = value == invocation::kMissingKeyValue;
    if (kind == "dedupe") json["applies"] = applies;
    out.push_back(
        {app::describeFlow(only).front() + keyNote(value, gate->key, applies), std::move(json)});
  };
  add(&app::FlowRules::concurrency, "concurrency", planned.key);
  add(&app::FlowRules::singleton, "singleton", planned.key);
  add(&app::FlowRules::dedupe, "dedupe", planned.dedupe);
  add(&app::FlowRules::debounce, "debounce", planned.debounce);
  return out;
}

void explainApp(const ExplainOptions& options, std::istream& in, Clock& clock,
                CommandContext& context) {
  Instant now = Instant::fromWallTime(clock.now());
  if (!options.now.empty()) {
    const std::optional<Instant> parsed = parseRfc3339(options.now);
    if (!parsed) {
      context.err << "relay " << kCommand << ": invalid --now \"" << options.now
                  << "\": expected an RFC 3339 timestamp such as 2026-01-01T10:00:00Z\n";
      context.exit_code = kExitUsage;
      return;
    }
    now = *parsed;
  }
  // MAX_EVENT_BYTES and the other settings as the worker reads them.
  auto config = loadCommandConfig(kCommand, {options.flags.apps, options.flags.runtime}, context);
  if (!config) return;
  auto raw = readEventArgument(options.event, in);
  if (!raw.ok()) {
    context.err << "relay " << kCommand << ": " << raw.error().message << "\n";
    context.exit_code = kExitUsage;
    return;
  }
  // The worker's own checks: an event it would dead-letter never reaches the rules.
  auto event = catalog::checkEventValue(std::move(raw).value(), config->max_event_bytes);
  if (!event.ok()) {
    context.err << "relay " << kCommand
                << ": the worker would dead-letter this event: " << event.error().reason() << "\n";
    context.exit_code = kExitUsage;
    return;
  }
  auto loaded = loadApps(options.flags, kCommand, clock, context);
  if (!loaded) return;
  const auto snapshot = loaded->registry->snapshot();
  const app::AppEntry* entry = findLoadedApp(*snapshot, options.name, kCommand, context);
  if (entry == nullptr) return;
  const app::App& app = *entry->app;
  // Paused on every worker (relay app pause) counts like a runtime that cannot run the app.
  const std::optional<std::set<std::string>> paused = pausedApps(options.flags, context);
  const app::AppStatus status = clusterStatus(*entry, paused);

  std::size_t matched = 0;
  Json rules = Json::array();
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < app.rules.size(); ++i) {
    const app::Rule& rule = app.rules[i];
    const pattern::Explanation explanation = pattern::explain(*rule.pattern, *event, now);
    if (explanation.matched) ++matched;
    Json item = {{"index", i}, {"handler", rule.handler}, {"line", rule.line}};
    item.update(explanationJson(explanation));
    lines.push_back("  [" + std::to_string(i) + "] " + rule.handler + " (template.yaml line " +
                    std::to_string(rule.line) + "): " +
                    (explanation.matched ? "match" : "no match: " + explanation.toString()));
    // The limits its invocation would pass before it starts (only a matching rule has one).
    if (explanation.matched) {
      Json limits = Json::array();
      for (AppliedLimit& limit : appliedLimits(app, rule, *event)) {
        lines.push_back("      " + limit.text);
        limits.push_back(std::move(limit.json));
      }
      item["flow"] = std::move(limits);
    }
    rules.push_back(std::move(item));
  }
  if (options.json) {
    Json out = {{"app", app.name},
                {"now", formatInstant(now)},
                {"available", status.available},
                {"reason", status.reason},
                {"paused", paused ? Json(paused->count(app.name) > 0) : Json()},
                {"matched", matched},
                {"rules", std::move(rules)}};
    context.out << prettyJson(out) << "\n";
  } else {
    context.out << "app " << app.name << ": " << matched << " of " << app.rules.size()
                << " rules match (now() = " << formatInstant(now) << ")\n";
    for (const std::string& line : lines) context.out << line << "\n";
    if (!status.available && matched > 0) {
      context.out << "note: the app is unavailable (" << status.reason
                  << "): the worker would leave these invocations pending\n";
    }
  }
  context.exit_code = matched > 0 ? kExitOk : kExitFailed;
}

}  // namespace

void addExplainCommand(CLI::App& root, CommandContext& context) {
  CLI::App* group = root.get_subcommand("app");
  auto options = std::make_shared<ExplainOptions>();
  CLI::App* command = group->add_subcommand(
      "explain",
      "Match an event against each rule of NAME and say, for each rule that does not match, "
      "which condition failed and what the event holds there");
  command->add_option("NAME", options->name, "The app")->required();
  command->add_option("--event", options->event, "The event: JSON, or @FILE (default: stdin)")
      ->type_name("JSON|@FILE");
  command->add_option("--now", options->now, "RFC 3339 instant for now() (default: the clock)");
  command->add_flag("--json", options->json, "Print one JSON object");
  addAppFlags(*command, options->flags);
  command->callback([options, &context] {
    SystemClock clock;
    explainApp(*options, std::cin, clock, context);
  });
}

}  // namespace relay::cli
