#include "app/app_description.h"

#include <date/date.h>

#include <cstdio>

#include "common/duration.h"
#include "common/rfc3339.h"
#include "common/size.h"
#include "pattern/pattern.h"
#include "schedule/next_fire.h"

namespace relay::app {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::size_t kNextFireTimes = 3;

// The local wall-clock reading of `instant` in `zone` as RFC 3339 with its offset.
std::string formatLocal(const schedule::TimeZone& zone, WallTime instant) {
  const auto seconds = std::chrono::time_point_cast<std::chrono::seconds>(instant);
  const date::local_seconds local = zone.toLocal(seconds);
  const std::chrono::seconds offset = zone.offsetAt(seconds);
  const auto minutes = std::chrono::abs(offset).count() / 60;
  char suffix[8];
  std::snprintf(suffix, sizeof suffix, "%c%02d:%02d", offset.count() < 0 ? '-' : '+',
                static_cast<int>(minutes / 60), static_cast<int>(minutes % 60));
  return date::format("%FT%T", local) + suffix;
}

// An egress list as the template wrote it, normalised: [{"to": "10.0.0.0/8", "ports":
// ["443-443"]}].
Json egressJson(const std::vector<runtime::EgressAllow>& egress) {
  Json list = Json::array();
  for (const runtime::EgressAllow& allow : egress) {
    Json ports = Json::array();
    for (const runtime::PortRange& range : allow.ports) {
      ports.push_back(range.first == range.last
                          ? std::to_string(range.first)
                          : std::to_string(range.first) + "-" + std::to_string(range.last));
    }
    list.push_back({{"to", allow.to.text()}, {"ports", std::move(ports)}});
  }
  return list;
}

}  // namespace

std::string describeRate(const ThrottleRule& throttle) {
  std::string text = std::to_string(throttle.limit) + " per " + formatDuration(throttle.period);
  if (throttle.burst > 0) text += ", burst " + std::to_string(throttle.burst);
  return text;
}

std::vector<std::string> describeFlow(const FlowRules& flow) {
  std::vector<std::string> lines;
  if (flow.throttle) lines.push_back("throttle: " + describeRate(*flow.throttle));
  if (flow.concurrency) {
    lines.push_back("concurrency: " + std::to_string(flow.concurrency->limit) + " at a time per " +
                    flow.concurrency->key.text);
  }
  if (flow.singleton) {
    lines.push_back("singleton: one at a time per " + flow.singleton->key.text +
                    ", a newer event replaces a waiting one");
  }
  if (flow.dedupe) {
    lines.push_back("dedupe: by " + flow.dedupe->key.text + " for " +
                    formatDuration(flow.dedupe->ttl));
  }
  if (flow.debounce) {
    lines.push_back("debounce: by " + flow.debounce->key.text + ", runs the latest after " +
                    formatDuration(flow.debounce->period) + " quiet, at most " +
                    formatDuration(flow.debounce->max_wait) + " after the first");
  }
  return lines;
}

Json throttleJson(const ThrottleRule& throttle) {
  return {{"limit", throttle.limit},
          {"period", formatDuration(throttle.period)},
          {"period_ms", throttle.period.count()},
          {"burst", throttle.burst}};
}

Json flowJson(const FlowRules& flow) {
  Json out = Json::object();
  if (flow.throttle) out["throttle"] = throttleJson(*flow.throttle);
  if (flow.concurrency) {
    out["concurrency"] = {{"limit", flow.concurrency->limit}, {"key", flow.concurrency->key.text}};
  }
  if (flow.singleton) out["singleton"] = {{"key", flow.singleton->key.text}};
  if (flow.dedupe) {
    out["dedupe"] = {{"key", flow.dedupe->key.text},
                     {"ttl", formatDuration(flow.dedupe->ttl)},
                     {"ttl_ms", flow.dedupe->ttl.count()}};
  }
  if (flow.debounce) {
    out["debounce"] = {{"key", flow.debounce->key.text},
                       {"period", formatDuration(flow.debounce->period)},
                       {"period_ms", flow.debounce->period.count()},
                       {"max_wait", formatDuration(flow.debounce->max_wait)},
                       {"max_wait_ms", flow.debounce->max_wait.count()}};
  }
  return out;
}

std::vector<FireTime> nextFires(const Schedule& schedule, WallTime now, std::size_t count) {
  std::vector<FireTime> fires;
  for (const WallTime fire :
       schedule::nextFireTimes(schedule.cron, schedule.time_zone, now, count)) {
    fires.push_back({formatRfc3339(fire), formatLocal(schedule.time_zone, fire)});
  }
  return fires;
}

Json appDetailJson(const AppEntry& entry, WallTime now) {
  const App& app = *entry.app;
  Json env = Json::object();
  for (const auto& [key, value] : app.env) env[key] = value;
  Json errors = Json::array();
  for (const Diagnostic& diagnostic : entry.errors) errors.push_back(diagnostic.toString());
  Json rules = Json::array();
  for (const Rule& rule : app.rules) {
    rules.push_back({{"handler", rule.handler},
                     {"pattern", Json::parse(rule.pattern_json, nullptr, false)},
                     {"timeout", formatDuration(rule.timeout)},
                     {"timeout_ms", rule.timeout.count()},
                     {"retries", rule.retries},
                     {"deadline_ms", rule.deadline.count()},
                     {"start_timeout_ms", rule.start_timeout.count()},
                     {"flow", flowJson(rule.flow)},
                     {"line", rule.line}});
  }
  Json schedules = Json::array();
  for (const Schedule& schedule : app.schedules) {
    Json next = Json::array();
    for (const FireTime& fire : nextFires(schedule, now, kNextFireTimes)) {
      next.push_back({{"utc", fire.utc}, {"local", fire.local}});
    }
    schedules.push_back({{"name", schedule.name},
                         {"cron", schedule.cron_text},
                         {"timezone", schedule.time_zone.name()},
                         {"handler", schedule.handler},
                         {"timeout", formatDuration(schedule.timeout)},
                         {"timeout_ms", schedule.timeout.count()},
                         {"retries", schedule.retries},
                         {"deadline_ms", schedule.deadline.count()},
                         {"start_timeout_ms", schedule.start_timeout.count()},
                         {"payload", Json::parse(schedule.payload_json, nullptr, false)},
                         {"line", schedule.line},
                         {"next", std::move(next)}});
  }
  // docs/replay.md "Archive": null without one; the pattern null when the rules decide.
  Json archive;
  if (app.archive) {
    archive = {
        {"retention", formatDuration(app.archive->retention)},
        {"retention_ms", app.archive->retention.count()},
        {"pattern",
         app.archive->pattern ? Json::parse(app.archive->pattern_json, nullptr, false) : Json()}};
  }
  return {{"name", app.name},
          {"dir", entry.dir.string()},
          {"runtime", runtime::languageName(app.runtime)},
          {"image", app.image},
          {"image_digest",
           entry.status.image_digest.empty() ? Json() : Json(entry.status.image_digest)},
          {"concurrency", app.concurrency},
          {"throttle", app.throttle ? throttleJson(*app.throttle) : Json()},
          {"network", app.network},
          {"egress", egressJson(app.egress)},
          {"env", std::move(env)},
          {"resources",
           {{"memory", formatSize(app.resources.memory_bytes)},
            {"memory_bytes", app.resources.memory_bytes},
            {"cpus", app.resources.cpus},
            {"pids", app.resources.pids}}},
          {"loaded", entry.status.loaded},
          {"available", entry.status.available},
          {"reason", entry.status.reason},
          {"errors", std::move(errors)},
          {"rules", std::move(rules)},
          {"schedules", std::move(schedules)},
          {"archive", std::move(archive)}};
}

Json appSummaryJson(const AppEntry& entry) {
  Json errors = Json::array();
  for (const Diagnostic& diagnostic : entry.errors) errors.push_back(diagnostic.toString());
  return {{"name", entry.name},
          {"dir", entry.dir.string()},
          {"runtime", entry.runtime ? Json(runtime::languageName(*entry.runtime)) : Json()},
          {"rules", entry.app ? Json(entry.app->rules.size()) : Json()},
          {"schedules", entry.app ? Json(entry.app->schedules.size()) : Json()},
          {"loaded", entry.status.loaded},
          {"available", entry.status.available},
          {"reason", entry.status.reason},
          {"errors", std::move(errors)}};
}

}  // namespace relay::app
