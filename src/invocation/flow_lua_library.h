#pragma once

namespace relay::invocation {

/// The Lua of flow control (docs/pipeline.md "Flow control"), after the lifecycle prelude
/// (lifecycle_lua_library.h) in the *start*, *complete*, *release* and *renew* scripts. The worker
/// passes every key as KEYS and describes the gates in one ARGV text (redis_lifecycle_store.cpp
/// writes it, the in-memory store of the tests mirrors every rule):
///
///   f <stats> <promise-ms> <stream> <due> <group>     the context (key indexes into KEYS)
///   t <inv> <state> <T-ms> <tau-ms> <period-ms>        a throttle of invocation <inv> (1-based)
///   k <inv> <running> <waiting> <limit> <latest|0>     its key's slots (a singleton: <latest>)
///   d <inv> <key> <ttl-ms>                             its dedupe key
///   b <inv> <key> <period-ms> <max-wait-ms>            its debounce key
///
/// The held slots of *complete*, *release* and *renew* use the `f` and `k` lines (with <inv> 0).
inline constexpr const char* kFlowLuaLibrary = R"LUA(
local function flow_parse(text)
  local flow = {gates = {}, promise = 30000, notes = {}}
  for line in string.gmatch(text or '', '[^\n]+') do
    local w = {}
    for word in string.gmatch(line, '%S+') do w[#w + 1] = word end
    local kind, i = w[1], tonumber(w[2])
    if kind == 'f' then
      flow.stats, flow.promise = KEYS[tonumber(w[2])], tonumber(w[3])
      flow.stream, flow.due, flow.group = KEYS[tonumber(w[4])], KEYS[tonumber(w[5])], w[6]
    else
      local g = flow.gates[i] or {throttles = {}}
      flow.gates[i] = g
      if kind == 't' then
        g.throttles[#g.throttles + 1] = {key = KEYS[tonumber(w[3])], T = tonumber(w[4]),
                                         tau = tonumber(w[5]), period = tonumber(w[6])}
      elseif kind == 'k' then
        g.key = {run = KEYS[tonumber(w[3])], wait = KEYS[tonumber(w[4])], limit = tonumber(w[5]),
                 latest = w[6] ~= '0' and KEYS[tonumber(w[6])] or nil}
      elseif kind == 'd' then
        g.dedupe = {key = KEYS[tonumber(w[3])], ttl = tonumber(w[4])}
      elseif kind == 'b' then
        g.debounce = {key = KEYS[tonumber(w[3])], period = tonumber(w[4]),
                      max_wait = tonumber(w[5])}
      end
    end
  end
  return flow
end
-- A key's slot set or queue outlives its last use by a week (a dead worker's slot, say, whose
-- key never comes back): waiters always touch it again long before (docs/pipeline.md).
local function flow_keep(key)
  redis.call('PEXPIRE', key, 604800000)
end
-- A message's place in a key's queue: the stream id's time, then its sequence (oldest first).
local function flow_order(id)
  local ms, seq = string.match(id, '^(%d+)-(%d+)$')
  if not ms then return 0 end
  return tonumber(ms) * 1024 + math.min(tonumber(seq), 1023)
end
-- What the verdict tells the worker about its flow decisions (metrics, logs).
local function flow_note(flow, kind, i, detail, at)
  flow.notes[#flow.notes + 1] = {kind, i - 1, detail or '', at or 0}
end
-- Free slots of a key go to the first of its queue, oldest first: each is promised a slot for
-- `promise` ms and made due now. The first left waiting is due again when the earliest slot
-- ends (a claim whose worker died, an unused promise): one look per key, whatever its backlog.
-- Returns how many it woke.
local function flow_wake(flow, k, now)
  local woke = 0
  local held = redis.call('ZCARD', k.run)
  for _ = 1, k.limit + 8 do
    if held >= k.limit then break end
    local head = redis.call('ZRANGE', k.wait, 0, 0)[1]
    if not head then break end
    redis.call('ZREM', k.wait, head)
    -- An id no longer pending (acknowledged elsewhere, deleted) waits for nothing.
    if redis.call('XPENDING', flow.stream, flow.group, head, head, 1)[1] then
      redis.call('ZADD', k.run, now + flow.promise, 'w:' .. head)
      flow_keep(k.run)
      redis.call('ZADD', flow.due, now, head)
      held, woke = held + 1, woke + 1
    end
  end
  local head = redis.call('ZRANGE', k.wait, 0, 0)[1]
  if head then
    local first = redis.call('ZRANGE', k.run, 0, 0, 'WITHSCORES')
    if first[2] then redis.call('ZADD', flow.due, 'LT', first[2], head) end
  end
  return woke
end
-- A slot given back (an outcome, a release, a claim taken over): the next waiter's turn.
local function flow_give_back(flow, k, token, now)
  redis.call('ZREM', k.run, token)
  return flow_wake(flow, k, now)
end
-- Invocation i (its field) leaves its key's queue for good (superseded, cancelled, expired):
-- it waits for nothing any more, and a slot promised to it goes to the next waiter.
local function flow_leave(flow, i, field, s, id, now)
  if s.hash['relay:wait:' .. field] then s.drop('relay:wait:' .. field) end
  local g = flow.gates[i]
  if g and g.key then
    redis.call('ZREM', g.key.wait, id)
    if redis.call('ZREM', g.key.run, 'w:' .. id) > 0 then flow_wake(flow, g.key, now) end
  end
end
-- A message's plan is recorded (its arrival): the dedupe key is taken or found taken, and it
-- becomes the latest event of its debounce burst and of its singleton key.
local function flow_arrive(flow, plan, s, id, now)
  for i, e in ipairs(plan) do
    local g = flow.gates[i]
    if g and g.dedupe then
      if not redis.call('SET', g.dedupe.key, id, 'NX', 'PX', g.dedupe.ttl) then
        local first = redis.call('GET', g.dedupe.key)
        if first and first ~= id then
          s.put(e.field, 'deduplicated:0:' .. first)
          stat(flow.stats, e.field, 'deduplicated', 1)
          flow_note(flow, 'deduplicated', i, first)
        end
      end
    end
    if g and g.debounce and not terminal(s.marker(e.field)) then
      local d = g.debounce
      local h = redis.call('HMGET', d.key, 'latest', 'first', 'done')
      local first = now
      local burst = h[1] and h[1] ~= h[3]
      -- Workers record plans in any order: an event older (by stream id) than the burst's
      -- latest is itself the superseded one (flow_gate says so) and changes nothing.
      if not (burst and flow_order(id) < flow_order(h[1])) then
        if burst then
          -- A burst in progress: this event is its latest now, and the one it replaces learns so.
          first = tonumber(h[2]) or now
          if h[1] ~= id then redis.call('ZADD', flow.due, now, h[1]) end
        end
        local at = math.min(now + d.period, first + d.max_wait)
        redis.call('HSET', d.key, 'latest', id, 'first', first, 'due', at)
        redis.call('PEXPIRE', d.key, at - now + 604800000)
      end
    end
    if g and g.key and g.key.latest and not terminal(s.marker(e.field)) then
      local k = g.key
      local previous = redis.call('GET', k.latest)
      -- As for debounce: only a newer event (by stream id) replaces the latest.
      if not (previous and flow_order(id) < flow_order(previous)) then
        if previous and previous ~= id and redis.call('ZSCORE', k.wait, previous) then
          redis.call('ZREM', k.wait, previous)
          redis.call('ZADD', flow.due, now, previous)
        end
        redis.call('SET', k.latest, id, 'PX', 604800000)
      end
    end
  end
end
-- Whether invocation i (plan entry e, its next attempt `attempt`) may start now. nil: go; else
-- {'wait', at (0: when its key wakes it), reason} or {'superseded', by}. Takes nothing:
-- flow_take() does, in the same call, when the invocation is claimed. `may_expire()` says
-- whether expired slots may be freed (not right after an outage).
local function flow_gate(flow, g, e, s, id, attempt, now, may_expire)
  if attempt == 1 and g.debounce then
    local d = g.debounce
    local h = redis.call('HMGET', d.key, 'latest', 'due', 'done')
    if h[1] and h[1] ~= id then return {'superseded', h[1]} end
    if h[1] and h[3] ~= id then
      if now < (tonumber(h[2]) or 0) then return {'wait', tonumber(h[2]), 'debounced'} end
      -- Its burst is over: a newer event starts a new one.
      redis.call('HSET', d.key, 'done', id)
    end
  end
  if attempt == 1 and g.key and g.key.latest then
    local latest = redis.call('GET', g.key.latest)
    if latest and latest ~= id then return {'superseded', latest} end
  end
  local k = g.key
  if k then
    if redis.call('ZCOUNT', k.run, '-inf', now) > 0 and may_expire() then
      redis.call('ZREMRANGEBYSCORE', k.run, '-inf', now)
    end
    if not redis.call('ZSCORE', k.run, 'w:' .. id) then
      local order = flow_order(id)
      local head = redis.call('ZRANGE', k.wait, 0, 0, 'WITHSCORES')
      local first_in_line = not head[1] or head[1] == id or order <= tonumber(head[2])
      if redis.call('ZCARD', k.run) >= k.limit or not first_in_line then
        redis.call('ZADD', k.wait, 'NX', order, id)
        flow_keep(k.wait)
        flow_wake(flow, k, now)
        if not redis.call('ZSCORE', k.run, 'w:' .. id) then
          local wake_at = 0
          if redis.call('ZRANGE', k.wait, 0, 0)[1] == id then
            local earliest = redis.call('ZRANGE', k.run, 0, 0, 'WITHSCORES')
            wake_at = tonumber(earliest[2]) or now
          end
          return {'wait', wake_at, 'key_busy'}
        end
      end
    end
  end
  if #g.throttles > 0 then
    local reserved = tonumber(string.match(s.hash['relay:wait:' .. e.field] or '',
                                           '^throttled:(%d+)$'))
    local wait = nil
    for _, t in ipairs(g.throttles) do
      local st = redis.call('HMGET', t.key, 'a', 'r')
      t.a, t.r = tonumber(st[1]) or 0, tonumber(st[2]) or 0
      local at = nil
      if reserved then
        -- Its turn was reserved: it starts once the throttle admits it.
        if now < reserved then at = reserved elseif t.a > now + t.tau then at = t.a - t.tau end
      elseif t.r > now or t.a > now + t.tau then
        -- The next turn, after every reserved one: oldest first.
        at = math.max(t.r, now, t.a - t.tau)
        t.r = at + t.T
        redis.call('HSET', t.key, 'r', t.r)
        redis.call('PEXPIRE', t.key, math.ceil(math.max(t.a, t.r) - now + t.period) + 1000)
      end
      if at and (not wait or at > wait) then wait = at end
    end
    if wait then return {'wait', math.ceil(wait), 'throttled'} end
  end
  return nil
end
-- Invocation i is claimed with `token` until `deadline`: it takes its key slot and its
-- throttles' turn (the gate read their state in this call) and stops waiting.
local function flow_take(flow, g, e, s, id, token, deadline, now)
  for _, t in ipairs(g.throttles) do
    t.a = math.max(t.a, now) + t.T
    redis.call('HSET', t.key, 'a', t.a)
    redis.call('PEXPIRE', t.key, math.ceil(math.max(t.a, t.r) - now + t.period) + 1000)
  end
  if g.key then
    redis.call('ZREM', g.key.run, 'w:' .. id)
    redis.call('ZADD', g.key.run, deadline, token)
    flow_keep(g.key.run)
    redis.call('ZREM', g.key.wait, id)
  end
  if s.hash['relay:wait:' .. e.field] then s.drop('relay:wait:' .. e.field) end
end
-- Invocation i waits for its flow control: why and until when, counted once per wait.
local function flow_wait(flow, i, e, s, reason, at)
  local field = 'relay:wait:' .. e.field
  local before = s.hash[field]
  s.put(field, reason .. ':' .. at)
  if not before or not string.find(before, '^' .. reason .. ':') then
    stat(flow.stats, e.field, 'deferred', 1)
    flow_note(flow, 'deferred', i, reason, at)
  end
end
-- The notes as the verdict's last element (lifecycle_replies.cpp), none when empty.
local function flow_reply(flow, reply)
  if #flow.notes > 0 then reply[#reply + 1] = flow.notes end
  return reply
end
)LUA";

}  // namespace relay::invocation
