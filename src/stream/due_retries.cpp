#include "stream/due_retries.h"

#include <utility>

namespace relay::stream {
namespace {

// KEYS: due, stream. ARGV: group, consumer, min-idle-ms, count, lease-ms.
// Returns the taken entries as [id, [field, value, ...]].
constexpr const char* kTakeDue = R"LUA(
local due, stream = KEYS[1], KEYS[2]
local group, consumer, min_idle = ARGV[1], ARGV[2], ARGV[3]
local count, lease = tonumber(ARGV[4]), tonumber(ARGV[5])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local taken = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', due, '-inf', now, 'LIMIT', 0, count)) do
  if #redis.call('XRANGE', stream, id, id) == 0 then
    redis.call('ZREM', due, id)  -- the body is gone: the reclaim sweep counts and clears it
  elseif #redis.call('XPENDING', stream, group, id, id, 1) == 0 then
    redis.call('ZREM', due, id)  -- acknowledged meanwhile
  else
    local claimed = redis.call('XCLAIM', stream, group, consumer, min_idle, id)
    if claimed[1] then taken[#taken + 1] = claimed[1] end
    redis.call('ZADD', due, now + lease, id)
  end
end
return taken
)LUA";

}  // namespace

DueRetries::DueRetries(invocation::StreamKeys keys, std::string consumer, Settings settings)
    : keys_(std::move(keys)),
      consumer_(std::move(consumer)),
      settings_(settings),
      script_(kTakeDue) {}

redis::Result<std::vector<StreamEntry>> DueRetries::take(redis::Connection& redis,
                                                         int count) const {
  auto reply = redis.eval(script_, {keys_.due(), keys_.stream},
                          {keys_.group, consumer_, std::to_string(settings_.min_idle.count()),
                           std::to_string(count), std::to_string(settings_.lease.count())});
  if (!reply.ok()) return reply.error();
  return parseEntries(reply->view());
}

}  // namespace relay::stream
