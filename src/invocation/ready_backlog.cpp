#include "invocation/ready_backlog.h"

#include <algorithm>
#include <string>
#include <vector>

#include "invocation/lifecycle_lua_library.h"

namespace relay::invocation {
namespace {

// KEYS: stream, due index. ARGV: group, the parking consumer. Returns {lag or -1 when Redis
// cannot tell it, pending, parked, due later than now, due by now, last-delivered-id}, or {-2}
// without the group.
constexpr const char* kCountsScript = R"LUA(
local stream, due = KEYS[1], KEYS[2]
local ok, groups = pcall(redis.call, 'XINFO', 'GROUPS', stream)
if not ok then return {-2} end
for _, g in ipairs(groups) do
  local info = {}
  for i = 1, #g, 2 do info[g[i]] = g[i + 1] end
  if info['name'] == ARGV[1] then
    local lag = info['lag']
    if type(lag) ~= 'number' then lag = -1 end
    local parked = 0
    for _, c in ipairs(redis.call('XINFO', 'CONSUMERS', stream, ARGV[1])) do
      local consumer = {}
      for i = 1, #c, 2 do consumer[c[i]] = c[i + 1] end
      if consumer['name'] == ARGV[2] then parked = consumer['pending'] end
    end
    local now = now_ms()
    return {lag, info['pending'], parked, redis.call('ZCOUNT', due, '(' .. now, '+inf'),
            redis.call('ZCOUNT', due, '-inf', now), info['last-delivered-id']}
  end
end
return {-2}
)LUA";

}  // namespace

ReadyBacklogReader::ReadyBacklogReader(StreamKeys keys, ReadyBacklogSettings settings)
    : keys_(std::move(keys)),
      settings_(settings),
      counts_(std::string(kLifecycleLuaLibrary) + kCountsScript) {}

Result<ReadyBacklog> ReadyBacklogReader::read(redis::Connection& redis) const {
  auto counts = redis.eval(counts_, {keys_.stream, keys_.due()},
                           {keys_.group, std::string(kParkingConsumer)});
  if (!counts.ok()) return counts.error().toRelay();
  auto fields = counts->elements();
  if (!fields.ok()) return fields.error().toRelay();
  const auto number = [&](std::size_t i) -> long long {
    auto value = (*fields)[i].integer();
    return value.ok() ? *value : 0;
  };
  if (fields->empty() || number(0) == -2) {
    return Error::notFound("consumer group \"" + keys_.group + "\" of stream \"" + keys_.stream +
                           "\" does not exist");
  }
  if (fields->size() < 6) return Error::internal("unexpected reply of the backlog script");
  ReadyBacklog backlog;
  backlog.lag = number(0);
  backlog.pending = number(1);
  backlog.parked = number(2);
  // Every parked message waits on the due index or a paused app's queue (or both): the index
  // entries later than now are its backoffs, those due by now the poller takes back within a
  // second; what is left of the parked waits for a resume.
  backlog.waiting_backoff = std::min<std::int64_t>(backlog.parked, number(3));
  const std::int64_t due_now =
      std::min<std::int64_t>(backlog.parked - backlog.waiting_backoff, number(4));
  backlog.waiting_pause = backlog.parked - backlog.waiting_backoff - due_now;
  if (backlog.lag < 0) {
    // Redis cannot tell the lag (entries deleted in the undelivered range): count them.
    auto last = (*fields)[5].string();
    const std::string after = last.ok() ? "(" + std::string(*last) : "-";
    auto entries = redis.command(
        {"XRANGE", keys_.stream, after, "+", "COUNT", std::to_string(settings_.scan_limit)});
    if (!entries.ok()) return entries.error().toRelay();
    auto rows = entries->elements();
    backlog.lag = rows.ok() ? static_cast<std::int64_t>(rows->size()) : 0;
    backlog.lag_counted = true;
  }
  return backlog;
}

}  // namespace relay::invocation
