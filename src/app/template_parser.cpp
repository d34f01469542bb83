#include "app/template_parser.h"

#include <algorithm>
#include <map>
#include <memory>
#include <utility>

#include "app/field_reader.h"
#include "app/flow_reader.h"
#include "app/names.h"
#include "app/yaml_document.h"
#include "common/duration.h"
#include "pattern/compiler.h"
#include "pattern/pattern.h"
#include "runtime/egress_policy.h"
#include "runtime/handler_resolver.h"
#include "yaml/core_schema.h"

namespace relay::app {
namespace {

using Fields = std::map<std::string, Field>;

std::string firstAt(int line) { return " (first at line " + std::to_string(line) + ")"; }

/// One pass over one template; see parseTemplate().
class TemplateParser {
 public:
  TemplateParser(const std::string& name, const std::filesystem::path& dir, TemplateErrors& errors)
      : name_(name), dir_(dir), errors_(errors), reader_(errors), flow_(reader_) {}

  ParsedTemplate parse(const YAML::Node& root) {
    const Field document{"", root, std::nullopt};
    if (!root.IsMap()) {
      errors_.add(root, "template must be a map of keys (runtime, events, ...), got " +
                            yaml::describe(root));
      return {};
    }
    const auto fields =
        reader_.readMap(document, "a map",
                        {"runtime", "image", "concurrency", "network", "egress", "env", "resources",
                         "throttle", "events", "schedules", "archive"},
                        {"runtime"});
    App app;
    app.name = name_;
    app.dir = dir_;
    if (const Field* field = findField(*fields, "runtime")) readRuntime(*field);
    if (runtime_) {
      app.runtime = *runtime_;
      app.image = runtime::defaultImage(*runtime_);
    }
    if (const Field* field = findField(*fields, "image")) {
      if (auto image = reader_.readString(*field)) {
        if (image->empty() || image->find_first_of(" \t\r\n") != std::string::npos) {
          reader_.error(*field,
                        "expected a container image reference such as python:3.12-slim, "
                        "got \"" +
                            *image + "\"");
        }
        app.image = std::move(*image);
        app.image_named = true;
      }
    }
    if (const Field* field = findField(*fields, "concurrency")) {
      app.concurrency = static_cast<int>(reader_.readInt(*field, 1, kMaxConcurrency).value_or(0));
    }
    if (const Field* field = findField(*fields, "throttle"))
      app.throttle = flow_.readThrottle(*field);
    if (const Field* field = findField(*fields, "network")) {
      app.network = reader_.readBool(*field).value_or(false);
    }
    if (const Field* field = findField(*fields, "egress")) readEgress(*field, app);
    if (const Field* field = findField(*fields, "env")) readEnv(*field, app);
    if (const Field* field = findField(*fields, "resources")) readResources(*field, app);
    if (const Field* field = findField(*fields, "events")) readRules(*field, app);
    if (const Field* field = findField(*fields, "schedules")) readSchedules(*field, app);
    if (const Field* field = findField(*fields, "archive")) readArchive(*field, app);
    ParsedTemplate parsed;
    parsed.runtime = runtime_;
    if (errors_.empty()) parsed.app = std::move(app);
    return parsed;
  }

 private:
  void readRuntime(const Field& field) {
    const auto text = reader_.readString(field);
    if (!text) return;
    runtime_ = runtime::languageFromName(*text);
    if (!runtime_) reader_.error(field, "expected python3, node or exec, got \"" + *text + "\"");
  }

  // `egress`: a list of {to: <CIDR>, ports: [443, "8000-8080"]}, only with `network: true`.
  void readEgress(const Field& field, App& app) {
    if (!app.network) {
      reader_.error(field,
                    "egress lists what a network: true handler may reach; without "
                    "network: true a handler has no network at all");
      return;
    }
    if (field.value.IsSequence() && field.value.size() == 0) {
      reader_.error(field,
                    "expected at least one destination (to leave the handler no network, "
                    "remove network: true)");
      return;
    }
    forEachElement(field, "destinations ({to: 203.0.113.0/24, ports: [443]})",
                   [&](const Field& element) {
                     if (auto allow = readEgressEntry(element)) app.egress.push_back(*allow);
                   });
  }

  std::optional<runtime::EgressAllow> readEgressEntry(const Field& field) {
    const auto fields =
        reader_.readMap(field, "a map with to and optionally ports", {"to", "ports"}, {"to"});
    if (!fields) return std::nullopt;
    runtime::EgressAllow allow;
    bool valid = true;
    if (const Field* to = findField(*fields, "to")) {
      const auto text = reader_.readString(*to);
      auto cidr = text ? runtime::parseCidr(*text) : Result<runtime::Cidr>(Error::invalid(""));
      if (text && !cidr.ok()) reader_.error(*to, cidr.error().message);
      valid = cidr.ok();
      if (valid) allow.to = *cidr;
    }
    if (const Field* ports = findField(*fields, "ports")) {
      forEachElement(*ports, "ports (443 or \"8000-8080\")", [&](const Field& port) {
        const yaml::Type type = yaml::typeOf(port.value);
        auto range = type == yaml::Type::kInt || type == yaml::Type::kString
                         ? runtime::parsePortRange(port.value.Scalar())
                         : Result<runtime::PortRange>(Error::invalid(
                               "expected a port (1-65535) or a range such as \"8000-8080\", got " +
                               yaml::describe(port.value)));
        if (!range.ok()) {
          reader_.error(port, range.error().message);
          valid = false;
          return;
        }
        allow.ports.push_back(*range);
      });
      if (ports->value.IsSequence() && ports->value.size() == 0) {
        reader_.error(*ports, "expected at least one port (leave ports out for every port)");
        valid = false;
      }
    }
    if (!valid) return std::nullopt;
    return allow;
  }

  void readEnv(const Field& field, App& app) {
    if (!field.value.IsMap()) {
      reader_.error(
          field, "expected a map of variable names to values, got " + yaml::describe(field.value));
      return;
    }
    for (const auto& pair : field.value) {
      if (!pair.first.IsScalar()) continue;
      const std::string& key = pair.first.Scalar();
      if (std::any_of(app.env.begin(), app.env.end(),
                      [&key](const auto& entry) { return entry.first == key; })) {
        continue;  // a duplicate, reported by checkYamlKeys
      }
      if (!isValidEnvName(key)) {
        errors_.add(pair.first, atPath(field.path, "\"" + key +
                                                       "\" is not a valid environment variable "
                                                       "name (expected [A-Za-z_][A-Za-z0-9_]*)"));
      } else if (key.starts_with("RELAY_")) {
        errors_.add(pair.first, atPath(field.path, key + " is reserved: Relay sets the RELAY_* "
                                                         "variables of every handler itself"));
      }
      const Field value{childPath(field.path, key), pair.second, pair.first};
      const yaml::Type type = yaml::typeOf(pair.second);
      if (type == yaml::Type::kNull) {
        reader_.error(value, "expected a value (write \"\" for an empty string)");
      } else if (type == yaml::Type::kMap || type == yaml::Type::kList ||
                 type == yaml::Type::kTagged) {
        reader_.error(value,
                      "expected a string, number or boolean, got " + yaml::describe(pair.second));
      } else if (pair.second.Scalar().find('\0') != std::string::npos) {
        reader_.error(value, "must not contain a NUL byte");
      } else {
        app.env.emplace_back(key, pair.second.Scalar());
      }
    }
  }

  void readResources(const Field& field, App& app) {
    const auto fields = reader_.readMap(field, "a map with memory, cpus and/or pids",
                                        {"memory", "cpus", "pids"}, {});
    if (!fields) return;
    if (const Field* memory = findField(*fields, "memory")) {
      app.resources.memory_bytes =
          reader_.readSize(*memory, kMinMemoryBytes, kMaxMemoryBytes).value_or(0);
    }
    if (const Field* cpus = findField(*fields, "cpus")) {
      app.resources.cpus = reader_.readNumber(*cpus, kMinCpus, kMaxCpus).value_or(0);
    }
    if (const Field* pids = findField(*fields, "pids")) {
      app.resources.pids = static_cast<int>(reader_.readInt(*pids, 1, kMaxPids).value_or(0));
    }
  }

  // The handler name when its syntax is valid for the runtime (its file may still be missing,
  // which is reported here too); nullopt otherwise.
  std::optional<std::string> readHandler(const Field& field) {
    auto handler = reader_.readString(field);
    if (!handler || !runtime_) return handler;  // without a runtime there is nothing to check
    if (const Status syntax = runtime::checkHandlerName(*runtime_, *handler); !syntax) {
      reader_.error(field, syntax.error().message);
      return std::nullopt;
    }
    if (const auto target = runtime::resolveHandler(*runtime_, dir_, *handler); !target) {
      reader_.error(field, target.error().message);
    }
    return handler;
  }

  template <typename Each>
  void forEachElement(const Field& field, const std::string& what, Each each) {
    if (!field.value.IsSequence()) {
      reader_.error(field, "expected a list of " + what + ", got " + yaml::describe(field.value));
      return;
    }
    std::size_t index = 0;
    for (const YAML::Node& element : field.value) {
      each(Field{elementPath(field.path, index++), element, std::nullopt});
    }
  }

  void readRules(const Field& field, App& app) {
    std::map<std::string, int> handler_lines;
    forEachElement(field, "rules", [&](const Field& element) {
      if (auto rule = readRule(element, handler_lines)) app.rules.push_back(std::move(*rule));
    });
  }

  std::optional<Rule> readRule(const Field& field, std::map<std::string, int>& handler_lines) {
    const auto fields =
        reader_.readMap(field, "a map with handler and pattern",
                        {"handler", "pattern", "timeout", "retries", "throttle", "concurrency",
                         "dedupe", "debounce", "singleton", "deadline", "start_timeout"},
                        {"handler", "pattern"});
    if (!fields) return std::nullopt;
    Rule rule;
    rule.line = yaml::line(field.value);
    if (const Field* handler = findField(*fields, "handler")) {
      if (auto name = readHandler(*handler)) {
        const auto [it, inserted] = handler_lines.emplace(*name, yaml::line(handler->value));
        if (!inserted) {
          reader_.error(*handler, "duplicate handler \"" + *name + "\"" + firstAt(it->second) +
                                      "; handlers must be unique within an app");
        }
        rule.handler = std::move(*name);
      }
    }
    if (const Field* pattern = findField(*fields, "pattern")) compilePattern(*pattern, rule);
    if (const Field* timeout = findField(*fields, "timeout")) {
      rule.timeout = reader_.readDuration(*timeout, kMaxTimeout).value_or(kDefaultTimeout);
    }
    if (const Field* retries = findField(*fields, "retries")) {
      rule.retries = static_cast<int>(reader_.readInt(*retries, 0, kMaxRetries).value_or(0));
    }
    rule.flow = flow_.readRule(*fields);
    readLimits(*fields, rule.deadline, rule.start_timeout);
    return rule;
  }

  // docs/apps.md "Deadlines": `deadline` and `start_timeout` of a rule or a schedule.
  void readLimits(const Fields& fields, Millis& deadline, Millis& start_timeout) {
    const Field* deadline_field = findField(fields, "deadline");
    const Field* start_field = findField(fields, "start_timeout");
    if (deadline_field) {
      deadline = reader_.readDuration(*deadline_field, kMaxDeadline).value_or(Millis{0});
    }
    if (start_field) {
      start_timeout = reader_.readDuration(*start_field, kMaxDeadline).value_or(Millis{0});
    }
    if (deadline.count() > 0 && start_timeout.count() > 0 && start_timeout > deadline) {
      reader_.error(*start_field, "start_timeout " + formatDuration(start_timeout) +
                                      " is longer than the deadline " + formatDuration(deadline) +
                                      " (no attempt starts after the deadline)");
    }
  }

  // docs/replay.md "Archive": `archive: {retention: 30d, pattern: {...}}`. Runs after the
  // rules are read: without a pattern the archive keeps what the rules match.
  void readArchive(const Field& field, App& app) {
    const auto fields = reader_.readMap(field, "a map with retention (and optionally pattern)",
                                        {"retention", "pattern"}, {"retention"});
    if (!fields) return;
    Archive archive;
    if (const Field* retention = findField(*fields, "retention")) {
      const auto read = reader_.readDuration(*retention, kMaxArchiveRetention);
      if (!read) return;
      archive.retention = *read;
    }
    if (const Field* pattern = findField(*fields, "pattern")) {
      Rule holder;
      compilePattern(*pattern, holder);
      if (!holder.pattern) return;
      archive.pattern = std::move(holder.pattern);
      archive.pattern_json = std::move(holder.pattern_json);
    } else if (app.rules.empty()) {
      reader_.error(field,
                    "an archive without a pattern keeps what the app's rules match, and the app "
                    "has no rules under events: give the archive a pattern");
      return;
    }
    app.archive = std::move(archive);
  }

  void compilePattern(const Field& field, Rule& rule) {
    if (field.value.IsNull()) {
      reader_.error(field, "expected a map of field conditions (e.g. {table_name: [users]}), got " +
                               yaml::describe(field.value));
      return;
    }
    pattern::CompileResult result = pattern::compile(field.value);
    if (const auto* problems = std::get_if<std::vector<pattern::CompileError>>(&result)) {
      for (const pattern::CompileError& problem : *problems) {
        const bool located = problem.line > 0;
        errors_.add(located ? problem.line : yaml::line(field.value),
                    located ? problem.column : yaml::column(field.value),
                    atPath(problem.path.empty() ? field.path : field.path + "." + problem.path,
                           problem.message));
      }
      return;
    }
    rule.pattern = std::get<std::shared_ptr<const pattern::Pattern>>(std::move(result));
    rule.pattern_json = dumpJson(yamlToJson(field.value, "", nullptr).value_or(nullptr));
  }

  void readSchedules(const Field& field, App& app) {
    std::map<std::string, int> name_lines;
    forEachElement(field, "schedules", [&](const Field& element) {
      if (auto schedule = readSchedule(element, name_lines)) {
        app.schedules.push_back(std::move(*schedule));
      }
    });
  }

  std::optional<Schedule> readSchedule(const Field& field, std::map<std::string, int>& name_lines) {
    const auto fields = reader_.readMap(field, "a map with name, cron and handler",
                                        {"name", "cron", "timezone", "handler", "timeout",
                                         "retries", "payload", "deadline", "start_timeout"},
                                        {"name", "cron", "handler"});
    if (!fields) return std::nullopt;
    std::string name;
    if (const Field* name_field = findField(*fields, "name")) {
      if (auto text = reader_.readString(*name_field)) {
        name = std::move(*text);
        if (!isValidName(name)) {
          reader_.error(*name_field, "\"" + name + "\" is not a valid schedule name (expected " +
                                         std::string(kNamePattern) + ")");
        }
        const auto [it, inserted] = name_lines.emplace(name, yaml::line(name_field->value));
        if (!inserted) {
          reader_.error(*name_field,
                        "duplicate schedule name \"" + name + "\"" + firstAt(it->second));
        }
      }
    }
    std::optional<schedule::CronExpression> cron;
    if (const Field* cron_field = findField(*fields, "cron")) {
      if (const auto text = reader_.readString(*cron_field)) {
        auto parsed = schedule::CronExpression::parse(*text);
        if (parsed) {
          cron = std::move(*parsed);
        } else {
          reader_.error(*cron_field, parsed.error().message);
        }
      }
    }
    std::optional<schedule::TimeZone> zone;
    const Field* zone_field = findField(*fields, "timezone");
    const std::optional<std::string> zone_name =
        zone_field ? reader_.readString(*zone_field) : std::string(kDefaultTimeZone);
    if (zone_name) {
      auto loaded = schedule::TimeZone::load(*zone_name);
      if (loaded) {
        zone = std::move(*loaded);
      } else {
        reader_.error(zone_field ? *zone_field : field, loaded.error().message);
      }
    }
    std::string handler;
    if (const Field* handler_field = findField(*fields, "handler")) {
      handler = readHandler(*handler_field).value_or("");
    }
    Millis timeout = kDefaultTimeout;
    if (const Field* timeout_field = findField(*fields, "timeout")) {
      timeout = reader_.readDuration(*timeout_field, kMaxTimeout).value_or(kDefaultTimeout);
    }
    int retries = kDefaultRetries;
    if (const Field* retries_field = findField(*fields, "retries")) {
      retries = static_cast<int>(reader_.readInt(*retries_field, 0, kMaxRetries).value_or(0));
    }
    std::string payload = "{}";
    if (const Field* payload_field = findField(*fields, "payload")) {
      if (!payload_field->value.IsMap()) {
        reader_.error(*payload_field, "expected a map (it becomes a JSON object), got " +
                                          yaml::describe(payload_field->value));
      } else if (const auto json =
                     yamlToJson(payload_field->value, payload_field->path, &errors_)) {
        payload = dumpJson(*json);
      }
    }
    Millis deadline{0}, start_timeout{0};
    readLimits(*fields, deadline, start_timeout);
    if (!cron || !zone) return std::nullopt;
    std::string cron_text = cron->text();
    return Schedule{std::move(name),  std::move(cron_text), std::move(*cron),
                    std::move(*zone), std::move(handler),   timeout,
                    retries,          std::move(payload),   yaml::line(field.value),
                    deadline,         start_timeout};
  }

  const std::string& name_;
  const std::filesystem::path& dir_;
  TemplateErrors& errors_;
  FieldReader reader_;
  FlowReader flow_;
  std::optional<runtime::Language> runtime_;
};

}  // namespace

ParsedTemplate parseTemplate(const YAML::Node& root, const std::string& name,
                             const std::filesystem::path& dir, TemplateErrors& errors) {
  return TemplateParser(name, dir, errors).parse(root);
}

}  // namespace relay::app
