#include "console/apps_api.h"

#include <set>

#include "app/app_description.h"
#include "catalog/classifier.h"
#include "common/rfc3339.h"
#include "console/console_guard.h"
#include "console/request_body.h"
#include "event/event.h"

namespace relay::console {

using http::HttpReply;
using http::HttpRequest;

Json appsJson(const app::Snapshot& snapshot, WallTime now) {
  Json apps = Json::array();
  for (const app::AppEntry& entry : snapshot.apps()) {
    Json app = app::appSummaryJson(entry);
    if (entry.app) {
      app["detail"] = app::appDetailJson(entry, now);
      // Keys only: env values may hold secrets, and every viewer reads this (docs/console.md
      // "Security"); `relay app inspect` shows them to whoever reads the apps root anyway.
      for (auto& [key, value] : app["detail"]["env"].items()) value = nullptr;
    }
    apps.push_back(std::move(app));
  }
  Json ignored = Json::array();
  for (const app::IgnoredDir& dir : snapshot.ignored()) {
    ignored.push_back({{"dir", dir.dir.string()}, {"reason", dir.reason}});
  }
  return {{"root", snapshot.root().string()},
          {"apps", std::move(apps)},
          {"ignored", std::move(ignored)}};
}

Json playgroundJson(const app::Snapshot& snapshot, std::string event, WallTime now) {
  Result<event::Event> decoded = event::decode(std::move(event));
  if (!decoded.ok()) {
    return {{"valid", false},
            {"error", decoded.error().message},
            {"matched", Json::array()},
            {"rules", Json::array()}};
  }
  // The classifier shares ownership of the snapshot: hand it one that does not free it.
  const std::shared_ptr<const app::Snapshot> held(std::shared_ptr<const app::Snapshot>(),
                                                  &snapshot);
  const catalog::Classifier classifier(held);
  const std::vector<catalog::Match> matches =
      classifier.classify(*decoded, Instant::fromWallTime(now));
  std::set<const app::Rule*> matched;
  Json order = Json::array();
  for (const catalog::Match& match : matches) {
    matched.insert(match.rule);
    order.push_back({{"app", match.entry->name}, {"handler", match.rule->handler}});
  }
  Json rules = Json::array();
  for (const app::AppEntry& entry : snapshot.apps()) {
    if (!entry.app) continue;
    for (const app::Rule& rule : entry.app->rules) {
      rules.push_back({{"app", entry.name},
                       {"handler", rule.handler},
                       {"pattern", Json::parse(rule.pattern_json, nullptr, false)},
                       {"matched", matched.count(&rule) > 0},
                       {"available", entry.status.available}});
    }
  }
  return {
      {"valid", true}, {"error", ""}, {"matched", std::move(order)}, {"rules", std::move(rules)}};
}

HttpReply listApps(ConsoleState& state, const HttpRequest&) {
  const auto snapshot = state.apps.snapshot();
  return jsonReply(appsJson(*snapshot, state.clock.now()));
}

HttpReply playground(ConsoleState& state, const HttpRequest& request) {
  auto body = decodeBody(request.body);
  if (!body.ok()) return jsonError(400, body.error().message);
  if (!body->contains("event") || !(*body)["event"].is_string()) {
    return jsonError(400, "expected {\"event\": \"<the event as JSON text>\"}");
  }
  const auto snapshot = state.apps.snapshot();
  return jsonReply(
      playgroundJson(*snapshot, (*body)["event"].get<std::string>(), state.clock.now()));
}

}  // namespace relay::console
