#include "stream/due_retries.h"

#include <utility>

#include "stream/idle_claims.h"

namespace relay::stream {
namespace {

// KEYS: due, stream. ARGV: group, consumer, min-idle-ms, count, lease-ms, parking consumer.
// Returns {entries taken as [id, [field, value, ...]], ids whose stream entry is gone, ms until
// the next id is due (-1: none)}.
constexpr const char* kTakeDue = R"LUA(
local due, stream = KEYS[1], KEYS[2]
local group, consumer, min_idle = ARGV[1], ARGV[2], ARGV[3]
local count, lease, parking = tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local taken, gone = {}, {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', due, '-inf', now, 'LIMIT', 0, count)) do
  local pel = redis.call('XPENDING', stream, group, id, id, 1)[1]
  if not pel then
    redis.call('ZREM', due, id)  -- acknowledged meanwhile
  elseif #redis.call('XRANGE', stream, id, id) == 0 then
    redis.call('ZREM', due, id)  -- the body is gone: the caller counts and clears it
    gone[#gone + 1] = id
  else
    -- A parked message waits for exactly this; one still with a worker is taken only once that
    -- worker stopped refreshing it (a live delivery renews its idle time).
    local idle = pel[2] == parking and 0 or min_idle
    local claimed = redis.call('XCLAIM', stream, group, consumer, idle, id)
    if claimed[1] then taken[#taken + 1] = claimed[1] end
    redis.call('ZADD', due, now + lease, id)
  end
end
local first = redis.call('ZRANGE', due, 0, 0, 'WITHSCORES')
local next_in = first[2] and math.max(tonumber(first[2]) - now, 0) or -1
return {taken, gone, next_in}
)LUA";

}  // namespace

DueRetries::DueRetries(invocation::StreamKeys keys, std::string consumer, Settings settings,
                       redis::ReplyLimits limits)
    : keys_(std::move(keys)),
      consumer_(std::move(consumer)),
      settings_(settings),
      limits_(limits),
      script_(kTakeDue) {}

redis::Result<DueBatch> DueRetries::take(redis::Connection& redis, int count) const {
  auto reply = redis.eval(
      script_, {keys_.due(), keys_.stream},
      {keys_.group, consumer_, std::to_string(settings_.min_idle.count()), std::to_string(count),
       std::to_string(settings_.lease.count()), std::string(invocation::kParkingConsumer)},
      &limits_);
  if (!reply.ok()) return reply.error();
  auto page = parseClaimed(reply->view());
  if (!page.ok()) return page.error();
  DueBatch batch;
  batch.page = std::move(page).value();
  auto next = reply->view().at(2);
  auto next_in = next.ok() ? next->integer() : redis::Result<long long>(-1);
  if (next_in.ok() && *next_in >= 0) batch.next_in = std::chrono::milliseconds(*next_in);
  return batch;
}

}  // namespace relay::stream
