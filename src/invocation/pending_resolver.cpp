#include "invocation/pending_resolver.h"

#include "common/whole_number.h"
#include "invocation/lifecycle_lua_library.h"

namespace relay::invocation {
namespace {

// KEYS: state, stream, dlq, due, stats, paused queue. ARGV: dead-letter|ack, group, message id,
// retention-ms, force (1|0), timestamp. Returns {not_pending} | {retained} | {held, field,
// running|claimed, owner, deadline} | {resolved, written fields...}.
constexpr const char* kResolve = R"LUA(
local key, stream, dlq, due, stats, queue = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local mode, group, id, ttl = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local force, stamp = ARGV[5] == '1', ARGV[6]
local pel = redis.call('XPENDING', stream, group, id, id, 1)
if #pel == 0 then return {'not_pending'} end
local owner, deliveries = pel[1][2], pel[1][4]
local s = read_state(key)
if s.retained() then
  redis.call('XACK', stream, group, id)
  redis.call('ZREM', due, id)
  return {'retained'}
end
-- The invocations it owes: its plan's, or (an older Relay's state) its invocation fields.
local fields = {}
local plan = s.plan()
if plan then
  for _, e in ipairs(plan) do fields[#fields + 1] = e.field end
else
  for field, _ in pairs(s.hash) do
    if string.sub(field, 1, 6) ~= 'relay:' then fields[#fields + 1] = field end
  end
  table.sort(fields)
end
local now = now_ms()
for _, f in ipairs(fields) do
  local m = s.marker(f)
  if held(m) and now < m.deadline and not force then
    return {'held', f, m.state, owner, tostring(m.deadline)}
  end
end
local written = {}
if mode == 'dead-letter' then
  local event, trace = '', nil
  local body = redis.call('XRANGE', stream, id, id)
  if body[1] then
    local kv = body[1][2]
    for i = 1, #kv, 2 do
      if kv[i] == 'event' then event = kv[i + 1] end
      if kv[i] == 'traceparent' then trace = kv[i + 1] end
    end
  end
  -- What the invocation was doing, and how many times its handler really ran.
  local function doing(m)
    if not m then return 'never started', 0 end
    if m.state == 'running' then return 'running attempt ' .. m.attempt .. ' (forced)', m.attempt end
    if m.state == 'claimed' then
      return 'claimed for attempt ' .. m.attempt .. ' (forced)', math.max(m.attempt - 1, 0)
    end
    if m.state == 'failed' then return 'attempt ' .. m.attempt .. ' failed', m.attempt end
    if m.state == 'exhausted' then
      return 'exhausted after ' .. m.attempt .. ' attempts, its entry owed', m.attempt
    end
    return 'unreadable marker "' .. tostring(m.text) .. '"', 0
  end
  local function add(field, app, handler, what, attempts)
    local entry = {'original_stream', stream, 'original_id', id, 'group', group,
      'consumer', owner, 'event', event, 'reason', 'operator: ' .. what, 'kind', 'operator',
      'app', app, 'handler', handler, 'deliveries', tostring(deliveries),
      'handler_attempts', tostring(attempts), 'timestamp', stamp}
    local function also(name, value)
      if value then entry[#entry + 1] = name; entry[#entry + 1] = value end
    end
    also('trace', trace)
    also('exit_reason', s.hash['relay:reason:' .. field])
    also('output_tail', s.hash['relay:tail:' .. field])
    local added = redis.pcall('XADD', dlq, '*', unpack(entry))
    if type(added) == 'table' and added.err then return false end
    s.put(field, 'exhausted:' .. attempts .. ':operator:dlq')
    stat(stats, field, 'dlq', 1)
    written[#written + 1] = field
    return true
  end
  local function failed()
    s.flush()
    return redis.error_reply('DLQ ' .. dlq .. ' cannot be written: nothing acknowledged')
  end
  for _, f in ipairs(fields) do
    local m = s.marker(f)
    if not terminal(m) then
      local slash = string.find(f, '/', 1, true)
      local what, attempts = doing(m)
      if not add(f, slash and string.sub(f, 1, slash - 1) or f,
                 slash and string.sub(f, slash + 1) or '-', what, attempts) then
        return failed()
      end
    end
  end
  if #fields == 0 and not add('-/-', '-', '-', 'no plan: never started', 0) then
    return failed()
  end
end
s.put('relay:operator', mode .. ' ' .. stamp)
redis.call('XACK', stream, group, id)
redis.call('ZREM', due, id)
for _, f in ipairs(fields) do
  local slash = string.find(f, '/', 1, true)
  if slash then redis.call('ZREM', queue, string.sub(f, 1, slash - 1) .. '\n' .. id) end
end
-- Retained even without a state before: a stale delivery of it is inert.
retain(s, ttl)
return {'resolved', unpack(written)}
)LUA";

redis::Error unexpectedResolve(std::string_view what) {
  return {redis::ErrorKind::kProtocol, "resolve: unexpected reply: " + std::string(what)};
}

std::string resolveText(const redis::Reply& reply, std::size_t index) {
  auto item = reply.at(index);
  if (!item.ok() || !item->string().ok()) return {};
  return std::string(*item->string());
}

}  // namespace

PendingResolver::PendingResolver(StreamKeys keys, std::chrono::milliseconds retention)
    : keys_(std::move(keys)),
      retention_(retention),
      script_(std::string(kLifecycleLuaLibrary) + kResolve) {}

redis::Result<ResolveVerdict> PendingResolver::resolve(redis::Connection& redis,
                                                       std::string_view id, Resolution resolution,
                                                       bool force,
                                                       std::string_view timestamp) const {
  const std::string message(id);
  auto reply = redis.eval(
      script_,
      {keys_.state(message), keys_.stream, keys_.dlq(), keys_.due(), keys_.stats(),
       keys_.pausedQueue()},
      {resolution == Resolution::kDeadLetter ? "dead-letter" : "ack", keys_.group, message,
       std::to_string(retention_.count()), force ? "1" : "0", std::string(timestamp)});
  if (!reply.ok()) return reply.error();
  const std::string verdict = resolveText(*reply, 0);
  ResolveVerdict out;
  if (verdict == "not_pending") {
    out.kind = ResolveVerdict::Kind::kNotPending;
  } else if (verdict == "retained") {
    out.kind = ResolveVerdict::Kind::kRetained;
  } else if (verdict == "held") {
    out.kind = ResolveVerdict::Kind::kHeld;
    out.field = resolveText(*reply, 1);
    out.claim = resolveText(*reply, 2);
    out.owner = resolveText(*reply, 3);
    if (!parseWholeNumber(resolveText(*reply, 4), out.until_ms))
      return unexpectedResolve("a deadline");
  } else if (verdict == "resolved") {
    out.kind = ResolveVerdict::Kind::kResolved;
    for (std::size_t i = 1; i < reply->size(); ++i) out.written.push_back(resolveText(*reply, i));
  } else {
    return unexpectedResolve(verdict);
  }
  return out;
}

}  // namespace relay::invocation
