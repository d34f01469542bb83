#include "worker/endpoints.h"

#include <vector>

namespace relay::worker {

http::HttpReply healthReply(const std::optional<std::string>& redis_problem,
                            const std::string& redis) {
  if (!redis_problem) return {200, "ok\n"};
  return {503, "unhealthy: redis at " + redis + ": " + *redis_problem + "\n"};
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
