#include "invocation/paused_apps.h"

#include "redis/script.h"

namespace relay::invocation {
namespace {

// docs/cli.md "Pausing an app": the app leaves both paused sets, and up to ARGV[2] of the
// messages parked for it move to the due index, due now (one bounded step: the caller repeats
// while it answers more). KEYS: paused, legacy paused, paused queue, due. ARGV: app, limit.
// Returns {removed (0|1), moved, left}.
constexpr const char* kResume = R"LUA(
local paused, legacy, queue, due = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local app, limit = ARGV[1], tonumber(ARGV[2])
local removed = redis.call('SREM', paused, app) + redis.call('SREM', legacy, app)
local first, last = '[' .. app .. '\n', '[' .. app .. '\n\255'
local members = redis.call('ZRANGEBYLEX', queue, first, last, 'LIMIT', 0, limit)
if #members > 0 then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  for _, member in ipairs(members) do
    local id = string.sub(member, #app + 2)
    -- Due now, unless it is due earlier already (a retry indexed for another reason).
    local score = redis.call('ZSCORE', due, id)
    if not score or tonumber(score) > now then redis.call('ZADD', due, now, id) end
  end
  redis.call('ZREM', queue, unpack(members))
end
local left = redis.call('ZLEXCOUNT', queue, first, last)
return {removed > 0 and 1 or 0, #members, left}
)LUA";

constexpr long long kResumeStep = 1'000;

}  // namespace

redis::Result<std::set<std::string>> readPausedApps(redis::Connection& redis,
                                                    const StreamKeys& keys) {
  auto reply = redis.command({"SUNION", keys.paused(), keys.legacyPaused()});
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
  static const redis::Script script(kResume);
  bool removed = false;
  while (true) {
    auto reply =
        redis.eval(script, {keys.paused(), keys.legacyPaused(), keys.pausedQueue(), keys.due()},
                   {std::string(app), std::to_string(kResumeStep)});
    if (!reply.ok()) return reply.error();
    auto was = reply->at(0);
    auto left = reply->at(2);
    if (!was.ok() || !left.ok() || !was->integer().ok() || !left->integer().ok()) {
      return redis::Error{redis::ErrorKind::kProtocol, "unexpected reply to the resume script"};
    }
    removed = removed || *was->integer() != 0;
    if (*left->integer() == 0) return removed;
  }
}

}  // namespace relay::invocation
