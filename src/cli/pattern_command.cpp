#include "cli/pattern_command.h"

#include <yaml-cpp/yaml.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <variant>

#include "cli/explanation_json.h"
#include "cli/json_output.h"
#include "common/rfc3339.h"
#include "common/system_clock.h"
#include "event/event.h"
#include "pattern/compiler.h"
#include "pattern/explain.h"
#include "pattern/pattern_text.h"
#include "yaml/core_schema.h"
#include "yaml/document.h"

namespace relay::cli {
namespace {

constexpr const char* kName = "relay pattern test";

// Reads a whole file, or `in` for "-"; nullopt (with the error printed) when unreadable.
std::optional<std::string> readSource(const std::string& path, std::istream& in,
                                      CommandContext& context) {
  std::stringstream text;
  if (path == "-") {
    text << in.rdbuf();
    return text.str();
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    context.err << kName << ": cannot read " << path << ": " << std::strerror(errno) << "\n";
    return std::nullopt;
  }
  text << file.rdbuf();
  return text.str();
}

// The pattern file's one YAML document (pattern/pattern_text.h), its problems reported as
// file:line:col.
std::shared_ptr<const pattern::Pattern> loadPattern(const std::string& text,
                                                    const std::string& shown,
                                                    CommandContext& context) {
  auto compiled = pattern::compileText(text, shown);
  if (auto* problems = std::get_if<std::vector<std::string>>(&compiled)) {
    for (const std::string& problem : *problems) context.err << problem << "\n";
    return nullptr;
  }
  return std::get<std::shared_ptr<const pattern::Pattern>>(std::move(compiled));
}

}  // namespace

std::shared_ptr<const pattern::Pattern> compilePatternFile(const std::string& text,
                                                           const std::string& shown,
                                                           CommandContext& context) {
  return loadPattern(text, shown, context);
}

void runPatternTest(const PatternTestOptions& options, std::istream& in, const Clock& clock,
                    CommandContext& context) {
  context.exit_code = kExitUsage;
  if (options.pattern == "-" && options.event == "@-") {
    context.err << kName << ": --pattern - and --event @- cannot both read stdin\n";
    return;
  }
  Instant now = Instant::fromWallTime(clock.now());
  if (options.now) {
    const std::optional<Instant> parsed = parseRfc3339(*options.now);
    if (!parsed) {
      context.err << kName << ": invalid --now \"" << *options.now
                  << "\": expected an RFC 3339 timestamp such as 2026-01-01T10:00:00Z\n";
      return;
    }
    now = *parsed;
  }
  const std::optional<std::string> pattern_text = readSource(options.pattern, in, context);
  if (!pattern_text) return;
  const std::string shown = options.pattern == "-" ? "<stdin>" : options.pattern;
  const std::shared_ptr<const pattern::Pattern> compiled =
      loadPattern(*pattern_text, shown, context);
  if (!compiled) return;

  std::string event_text = options.event;
  if (!event_text.empty() && event_text.front() == '@') {
    std::optional<std::string> file = readSource(event_text.substr(1), in, context);
    if (!file) return;
    event_text = std::move(*file);
  }
  Result<event::Event> event = event::decode(std::move(event_text));
  if (!event) {
    context.err << kName << ": invalid event: " << event.error().message << "\n";
    return;
  }
  const pattern::Explanation explanation = pattern::explain(*compiled, *event, now);
  if (options.json) {
    context.out << prettyJson(explanationJson(explanation)) << "\n";
  } else {
    context.out << (explanation.matched ? "match\n" : "no match\n");
    if (options.explain && explanation.failure) {
      context.out << explanation.failure->toString() << "\n";
    }
  }
  context.exit_code = explanation.matched ? kExitOk : kExitFailed;
}

void addPatternCommand(CLI::App& root, CommandContext& context) {
  CLI::App* group = root.add_subcommand("pattern", "Work with event patterns");
  group->require_subcommand(1);
  auto options = std::make_shared<PatternTestOptions>();
  auto now = std::make_shared<std::string>();
  CLI::App* test = group->add_subcommand("test", "Check whether an event matches a pattern");
  test->add_option("--pattern", options->pattern,
                   "YAML file holding the pattern map (what goes under pattern:), or - for stdin")
      ->required();
  test->add_option("--event", options->event, "the event JSON, or @FILE (@- for stdin)")
      ->required();
  CLI::Option* now_option =
      test->add_option("--now", *now, "RFC 3339 instant for now() (default: the clock)");
  test->add_flag("--explain", options->explain,
                 "On no match, also print the first condition that failed and the event's value");
  test->add_flag("--json", options->json,
                 "Print one JSON object: match, and path/got/wanted/reason on no match");
  test->callback([options, now, now_option, &context] {
    if (now_option->count() > 0) options->now = *now;
    const SystemClock clock;
    runPatternTest(*options, std::cin, clock, context);
  });
}

}  // namespace relay::cli
