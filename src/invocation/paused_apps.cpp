#include "invocation/paused_apps.h"

namespace relay::invocation {

redis::Result<std::set<std::string>> readPausedApps(redis::Connection& redis,
                                                    const StreamKeys& keys) {
  auto reply = redis.command({"SMEMBERS", keys.paused()});
  if (!reply.ok()) return reply.error();
  auto members = reply->elements();
  if (!members.ok()) return members.error();
  std::set<std::string> apps;
  for (const redis::ReplyView member : *members) {
    auto name = member.string();
    if (!name.ok()) return name.error();
    apps.emplace(*name);
  }
  return apps;
}

redis::Result<bool> pauseApp(redis::Connection& redis, const StreamKeys& keys,
                             std::string_view app) {
  auto reply = redis.command({"SADD", keys.paused(), app});
  if (!reply.ok()) return reply.error();
  auto added = reply->integer();
  if (!added.ok()) return added.error();
  return *added > 0;
}

redis::Result<bool> resumeApp(redis::Connection& redis, const StreamKeys& keys,
                              std::string_view app) {
  auto reply = redis.command({"SREM", keys.paused(), app});
  if (!reply.ok()) return reply.error();
  auto removed = reply->integer();
  if (!removed.ok()) return removed.error();
  return *removed > 0;
}

}  // namespace relay::invocation
