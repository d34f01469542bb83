#pragma once

namespace relay::invocation {

/// The Lua prelude of every lifecycle script (lifecycle_scripts.cpp): the marker and plan codecs
/// (mirrored in marker.cpp and plan.cpp), the time, the due index, the ACK with retention, the
/// statistics, the DLQ entry and the attempt journal.
inline constexpr const char* kLifecycleLuaLibrary = R"LUA(
local function split(text)
  local parts = {}
  for part in string.gmatch(text, '[^:]+') do parts[#parts + 1] = part end
  return parts
end
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function parse_plan(text)
  local plan = {}
  for line in string.gmatch(text, '[^\n]+') do
    -- A tab ends the field: the invocation's flow gates follow (flow.h), passed as ARGV too.
    local trigger, max, timeout, field = string.match(line, '^(%a) (%d+) (%d+) ([^\t]+)')
    if field then
      plan[#plan + 1] = {field = field, max = tonumber(max), timeout = tonumber(timeout),
                         trigger = trigger}
    end
  end
  return plan
end
local function parse_marker(text)
  if not text then return nil end
  local p = split(text)
  local m = {state = p[1], attempt = tonumber(p[2]) or 0, token = '-'}
  if (m.state == 'running' or m.state == 'claimed') and p[4] then
    m.token, m.deadline = p[3], tonumber(p[4]) or 0
  elseif m.state == 'failed' and p[3] then
    m.next, m.token = tonumber(p[3]) or 0, p[4] or '-'
  elseif m.state == 'succeeded' then
    m.token = p[3] or '-'
  elseif (m.state == 'exhausted' or m.state == 'expired') and p[3] then
    m.token, m.dlq = p[3], p[4] == 'dlq'
  elseif m.state == 'deferred' and p[4] then
    -- A retry-after deferral waits like a failure; its attempt was not charged.
    m.state, m.deferred, m.next, m.token = 'failed', true, tonumber(p[3]) or 0, p[4]
  elseif (m.state == 'deduplicated' or m.state == 'superseded') and p[3] then
    m.other = p[3]
  elseif m.state == 'cancelled' and p[3] then
    -- `dead`: a DLQ entry was asked for (`:owed`, then `:dlq` once written)
    m.token, m.dlq, m.dead = p[3], p[4] == 'dlq', p[4] == 'owed' or p[4] == 'dlq'
  else
    m = {state = 'corrupt', text = text}
  end
  return m
end
-- Its DLQ entry is owed and not written yet: exhausted, expired (a deadline), or cancelled with
-- `--dead-letter` (docs/pipeline.md "Cancellation").
local function owes_dlq(m)
  if m == nil or m.dlq then return false end
  return m.state == 'exhausted' or m.state == 'expired' or (m.state == 'cancelled' and m.dead)
end
local function terminal(m)
  if m == nil then return false end
  if m.state == 'succeeded' or m.state == 'deduplicated' or m.state == 'superseded' then
    return true
  end
  if m.state == 'cancelled' then return not owes_dlq(m) end
  return (m.state == 'exhausted' or m.state == 'expired') and m.dlq
end
-- The marker text of an invocation that ended without succeeding (marker.h).
local function ended_marker(state, attempt, token, dead)
  local text = state .. ':' .. attempt .. ':' .. token
  if dead and state == 'cancelled' then text = text .. ':owed' end
  return text
end
-- docs/pipeline.md "Cancellation": the request naming invocation `field` of the state `s` (its
-- own, its app's or the whole message's), as {dead = asked for a DLQ entry, id}; nil when none.
local function cancel_request(s, field)
  local app = string.match(field, '^([^/]*)')
  local v = s.hash['relay:cancel:' .. field] or s.hash['relay:cancel:' .. app .. '/*'] or
            s.hash['relay:cancel:*']
  if not v then return nil end
  local dead, id = string.match(v, '^(%d) (.*)$')
  return {dead = dead == '1', id = id or ''}
end
-- The request fields cancel_request() reads for `plan`, added to `fields` (for read_fields).
local function cancel_fields(plan, fields)
  fields[#fields + 1] = 'relay:cancel:*'
  for _, e in ipairs(plan) do
    fields[#fields + 1] = 'relay:cancel:' .. e.field
    fields[#fields + 1] = 'relay:cancel:' .. string.match(e.field, '^([^/]*)') .. '/*'
  end
end
-- Durations as Relay writes them (common/duration.h): 1h30m, 5m, 250ms.
local function span(ms)
  if ms <= 0 then return '0s' end
  local out = ''
  for _, u in ipairs({{'d', 86400000}, {'h', 3600000}, {'m', 60000}, {'s', 1000}, {'ms', 1}}) do
    if ms >= u[2] then
      out = out .. math.floor(ms / u[2]) .. u[1]
      ms = ms % u[2]
    end
  end
  return out
end
-- docs/apps.md "Deadlines": `relay:limits` (plan.h), field -> {deadline, start} in ms.
local function parse_limits(text)
  local limits = {}
  for line in string.gmatch(text or '', '[^\n]+') do
    local deadline, start, field = string.match(line, '^(%d+) (%d+) (.+)$')
    if field then limits[field] = {deadline = tonumber(deadline), start = tonumber(start)} end
  end
  return limits
end
-- When attempt `attempt` of an invocation with `limit` may no longer start (ms of Redis time,
-- counted from `born`, its message's publication) and why; nil when it always may.
local function expiry(limit, born, attempt)
  if not limit or not born then return nil end
  local at, why = nil, nil
  if limit.deadline > 0 then at, why = born + limit.deadline, 'deadline ' .. span(limit.deadline) end
  if attempt == 1 and limit.start > 0 and (at == nil or born + limit.start < at) then
    at, why = born + limit.start, 'start_timeout ' .. span(limit.start)
  end
  return at, why
end
-- The publication time of message `id` (the milliseconds of its stream id: Redis's clock).
local function born_of(id)
  return tonumber(string.match(id, '^(%d+)'))
end
-- A claim holds the invocation: `claimed` (its handler not started yet) or `running`.
local function held(m)
  return m ~= nil and (m.state == 'claimed' or m.state == 'running')
end
-- The delay after failed attempt `n` from a comma-separated table, its last entry repeating.
local function backoff_after(table_text, n)
  local delays = {}
  for d in string.gmatch(table_text, '[^,]+') do delays[#delays + 1] = tonumber(d) end
  if #delays == 0 then return 0 end
  return delays[math.min(math.max(n, 1), #delays)]
end
-- docs/pipeline.md "Outages": `seen` is when a worker last reached Redis (heartbeats every
-- renewal interval), `resumed` when one did after a gap longer than `gap` ms. Notes `now`, and
-- says whether an expired claim may be taken over: not within `grace` ms of the end of an
-- outage, so the worker that holds it can renew it or record its outcome first.
local function observe_clock(clock, now, gap, grace)
  local seen, resumed = unpack(redis.call('HMGET', clock, 'seen', 'resumed'))
  seen, resumed = tonumber(seen), tonumber(resumed) or 0
  if not seen or now - seen > gap then
    resumed = now
    redis.call('HSET', clock, 'seen', now, 'resumed', now)
  else
    redis.call('HSET', clock, 'seen', now)
  end
  return now >= resumed + grace
end
-- A message's state hash read once per call (docs/pipeline.md "Scripts"): `hash` holds the
-- fields read (all of them with read_state, the named ones with read_fields), updated as the
-- script writes them; the writes reach Redis in one HSET, in order, at flush().
local function state_of(key, hash)
  local s = {key = key, hash = hash, writes = {}, drops = {}}
  function s.put(field, value)
    s.hash[field] = value
    s.writes[#s.writes + 1] = field
    s.writes[#s.writes + 1] = value
    for i = #s.drops, 1, -1 do
      if s.drops[i] == field then table.remove(s.drops, i) end
    end
  end
  -- A field removed at flush(), unless written again after this call.
  function s.drop(field)
    s.hash[field] = nil
    s.drops[#s.drops + 1] = field
  end
  function s.flush()
    if #s.writes > 0 then
      redis.call('HSET', key, unpack(s.writes))
      s.writes = {}
    end
    if #s.drops > 0 then
      redis.call('HDEL', key, unpack(s.drops))
      s.drops = {}
    end
  end
  function s.retained() return s.hash['relay:retained'] ~= nil end
  function s.marker(field) return parse_marker(s.hash[field]) end
  -- The recorded plan, nil when none is (a script parses it once and passes it on).
  function s.plan()
    local text = s.hash['relay:plan']
    return text and parse_plan(text) or nil
  end
  return s
end
local function read_state(key)
  local flat = redis.call('HGETALL', key)
  local hash = {}
  for i = 1, #flat, 2 do hash[flat[i]] = flat[i + 1] end
  return state_of(key, hash)
end
local function read_fields(key, fields)
  local values = redis.call('HMGET', key, unpack(fields))
  local hash = {}
  for i, field in ipairs(fields) do
    if values[i] then hash[field] = values[i] end
  end
  return state_of(key, hash)
end
-- Every invocation of `plan` is terminal in `s` (nothing planned: nothing owed).
local function resolved(s, plan)
  for _, e in ipairs(plan or {}) do
    if not terminal(s.marker(e.field)) then return false end
  end
  return true
end
-- The due index holds each message at the earliest next_attempt_at of its failed invocations
-- (of `plan`, as `s` holds them now).
local function reindex(s, plan, due, id)
  local earliest = nil
  for _, e in ipairs(plan or {}) do
    local m = s.marker(e.field)
    if m and m.state == 'failed' and (earliest == nil or m.next < earliest) then
      earliest = m.next
    end
  end
  if earliest then redis.call('ZADD', due, earliest, id) else redis.call('ZREM', due, id) end
end
-- A message's state switched to retention (kept for `ttl` ms, or for ever with 0), with the
-- script's other writes to it.
local function retain(s, ttl)
  s.put('relay:retained', '1')
  s.flush()
  if ttl > 0 then redis.call('PEXPIRE', s.key, ttl) end
end
-- The message leaves the PEL and its state (if any) is switched to retention in the same step.
local function ack_and_retain(s, stream, due, group, id, ttl)
  redis.call('XACK', stream, group, id)
  redis.call('ZREM', due, id)
  if next(s.hash) ~= nil then retain(s, ttl) end
end
-- Statistics never change a message's lifecycle: a failed increment is only counted.
local stats_failures = 0
local function stat(stats, field, counter, by)
  local command = counter == 'duration_seconds' and 'HINCRBYFLOAT' or 'HINCRBY'
  local done = redis.pcall(command, stats, field .. ':' .. counter, by)
  if type(done) == 'table' and done.err then stats_failures = stats_failures + 1 end
end
local function xadd_dlq(dlq, stream, group, id, first)
  local entry = {}
  for i = first, #ARGV, 2 do
    local value = ARGV[i + 1]
    if ARGV[i] == 'deliveries' then
      local p = redis.call('XPENDING', stream, group, id, id, 1)
      value = p[1] and tostring(p[1][4]) or '0'
    end
    entry[#entry + 1] = ARGV[i]
    entry[#entry + 1] = value
  end
  -- A DLQ that cannot be written (say a key of another type in its place) changes nothing
  -- here: the invocation stays owed and is re-reported on redelivery.
  local added = redis.pcall('XADD', dlq, '*', unpack(entry))
  return type(added) ~= 'table' or added.err == nil
end
-- The attempt journal is a record next to the state, not a transition, and only for the
-- console: written whatever the state, expiring `ttl` ms after its last write (0: never), and a
-- write that fails (say a key of another type in its place) changes nothing else: 1 says so.
local function journal(key, field, record, ttl)
  local done = redis.pcall('HSET', key, field, record)
  if type(done) == 'table' and done.err then return 1 end
  if ttl > 0 then redis.pcall('PEXPIRE', key, ttl) end
  return 0
end
)LUA";

}  // namespace relay::invocation
