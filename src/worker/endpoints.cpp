#include "worker/endpoints.h"

#include <nlohmann/json.hpp>
#include <vector>

#include "stream/pending_json.h"

namespace relay::worker {

http::HttpReply healthReply(const std::optional<std::string>& redis_problem,
                            const std::optional<std::string>& lifecycle_problem,
                            const std::string& redis) {
  if (!redis_problem && !lifecycle_problem) return {200, "ok\n"};
  std::string body = "unhealthy: redis at " + redis + ": ";
  if (redis_problem) body += *redis_problem + (lifecycle_problem ? "; " : "");
  if (lifecycle_problem) body += *lifecycle_problem;
  return {503, body + "\n"};
}

http::HttpReply statusReply(const std::optional<std::string>& redis_problem,
                            const std::optional<std::string>& lifecycle_problem,
                            const std::string& redis, const GroupState& group,
                            const StreamHealth& stream) {
  using Json = nlohmann::ordered_json;
  Json problems = Json::array();
  if (redis_problem) problems.push_back("redis at " + redis + ": " + *redis_problem);
  if (lifecycle_problem) problems.push_back(*lifecycle_problem);
  const auto message = [](const std::optional<stream::PendingReport>& report) {
    return report ? stream::pendingJson(*report) : Json();
  };
  Json pending = {{"checked", stream.checked},
                  {"problem", stream.problem},
                  {"count", stream.pending},
                  {"oldest", message(stream.oldest)},
                  {"retention_ms", stream.retention.count()},
                  {"trim_held_back", Json()}};
  if (stream.held_back) {
    pending["trim_held_back"] = {{"group", stream.held_back_group},
                                 {"message", message(stream.held_back)}};
  }
  const Json body = {
      {"healthy", problems.empty()},
      {"problems", std::move(problems)},
      {"redis", redis},
      {"group", {{"checked", group.checked}, {"exists", group.exists}, {"problem", group.problem}}},
      {"pending", std::move(pending)}};
  return {200, body.dump(2, ' ', false, Json::error_handler_t::replace) + "\n", "application/json"};
}

http::HttpReply readinessReply(const GroupState& group, const app::Snapshot& apps, bool stopping) {
  std::vector<std::string> problems;
  if (stopping) problems.emplace_back("stopping");
  if (!group.checked) {
    problems.emplace_back("consumer group not checked yet");
  } else if (!group.exists) {
    problems.push_back(group.problem);
  }
  std::size_t loaded = 0;
  for (const app::AppEntry& entry : apps.apps()) loaded += entry.status.loaded ? 1 : 0;
  if (loaded == 0) {
    problems.push_back("no app loaded from " + apps.root().string() + " (" +
                       std::to_string(apps.apps().size()) + " app directories)");
  }
  if (problems.empty()) return {200, "ready: " + std::to_string(loaded) + " apps loaded\n"};
  std::string body = "not ready: ";
  for (std::size_t i = 0; i < problems.size(); ++i) body += (i ? "; " : "") + problems[i];
  return {503, body + "\n"};
}

}  // namespace relay::worker
