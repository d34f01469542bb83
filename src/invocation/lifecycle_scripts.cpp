#include "invocation/lifecycle_scripts.h"

#include <string>

#include "invocation/flow_lua_library.h"
#include "invocation/lifecycle_lua_library.h"

namespace relay::invocation {
namespace {

constexpr const char* kStart = R"LUA(
local key, due, attempts, stream = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local paused, paused_queue, clock, legacy_paused = KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local candidate, mask, token = ARGV[1], ARGV[2], ARGV[3]
local grace, lease, margin, id = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7]
local started, ttl, group, consumer = ARGV[8], tonumber(ARGV[9]), ARGV[10], ARGV[11]
local parking, backoff, elsewhere = ARGV[12], ARGV[13], tonumber(ARGV[14])
local gap, takeover_grace = tonumber(ARGV[15]), tonumber(ARGV[16])
local candidate_limits = ARGV[18] or ''
-- One read: the candidate's markers are the recorded plan's whenever this call goes on.
local plan = parse_plan(candidate)
local fields = {'relay:retained', 'relay:plan', 'relay:limits'}
for _, e in ipairs(plan) do
  fields[#fields + 1] = e.field
  fields[#fields + 1] = 'relay:reason:' .. e.field  -- kept in the reason of an ending
end
cancel_fields(plan, fields)
-- Flow control (docs/pipeline.md "Flow control"): what each invocation waits for, if anything.
local flow = flow_parse(ARGV[17])
for i, e in ipairs(plan) do
  if flow.gates[i] then fields[#fields + 1] = 'relay:wait:' .. e.field end
end
local s = read_fields(key, fields)
local pel = redis.call('XPENDING', stream, group, id, id, 1)[1]
if s.retained() then
  -- A finished message delivered again (say its group was re-created at 0): it leaves again.
  if pel then redis.call('XACK', stream, group, id) end
  return {'retained'}
end
-- Only the message's owner in the PEL starts it: a replica that took it over (or acknowledged
-- it, by other rules) decided what happens to it (docs/pipeline.md "Waiting").
if not pel then return {'gone'} end
if pel[2] == parking then return {'pending', 0} end  -- parked (maybe by this call, repeated)
if pel[2] ~= consumer then return {'elsewhere', pel[2]} end
local now = now_ms()
local text = s.hash['relay:plan']
if not text then
  s.put('relay:plan', candidate)
  flow_arrive(flow, plan, s, id, now)
  if candidate_limits ~= '' then s.put('relay:limits', candidate_limits) end
elseif text ~= candidate then
  return {'replan', text, s.hash['relay:limits'] or ''}
end
local limits = parse_limits(s.hash['relay:limits'])
local born = born_of(id)
local takeover = nil  -- whether expired claims may be taken over now, asked once
local function may_take_over()
  if takeover == nil then takeover = observe_clock(clock, now, gap, takeover_grace) end
  return takeover
end
local markers = {}
for i, e in ipairs(plan) do
  local m = s.marker(e.field)
  if m and m.state == 'corrupt' then s.flush(); return {'corrupt', e.field, m.text} end
  if held(m) then
    if m.token == token then  -- a repeat: same claim
      s.flush()
      return flow_reply(flow, {'run', i - 1, m.attempt})
    end
    if now < m.deadline or not may_take_over() then
      s.flush()
      return flow_reply(flow, {'busy', i - 1, m.attempt})
    end
    -- Its worker is gone. An unstarted claim charged nothing: due again now. A started one ran
    -- and counts, with the backoff of a failure (or exhaustion after the last attempt).
    if flow.gates[i] and flow.gates[i].key then
      flow_give_back(flow, flow.gates[i].key, m.token, now)
    end
    if m.state == 'claimed' then
      m = {state = 'failed', attempt = m.attempt - 1, next = now, token = '-'}
    else
      s.put('relay:reason:' .. e.field, 'worker lost during attempt ' .. m.attempt)
      s.put('relay:tail:' .. e.field, '')
      if m.attempt >= e.max then
        m = {state = 'exhausted', attempt = m.attempt, token = token, dlq = false}
      else
        m = {state = 'failed', attempt = m.attempt, token = '-',
             next = now + backoff_after(backoff, m.attempt)}
      end
    end
    if m.state == 'failed' then
      s.put(e.field, 'failed:' .. m.attempt .. ':' .. m.next .. ':-')
    else
      s.put(e.field, 'exhausted:' .. m.attempt .. ':' .. token)
    end
  end
  markers[i] = m
end
local is_paused = nil  -- app -> paused, read once for the plan's apps
local function paused_app(field)
  if not is_paused then
    is_paused = {}
    local apps = {}
    for _, e in ipairs(plan) do apps[#apps + 1] = string.match(e.field, '^([^/]*)') end
    local flags = redis.call('SMISMEMBER', paused, unpack(apps))
    local legacy = redis.call('SMISMEMBER', legacy_paused, unpack(apps))
    for j, app in ipairs(apps) do is_paused[app] = flags[j] == 1 or legacy[j] == 1 end
  end
  return is_paused[string.match(field, '^([^/]*)')]
end
local owed, parked_for, earliest, queued = {}, {}, nil, false
-- An owed DLQ entry: plan index, attempts run, and why (exhausted, expired or cancelled).
local function owe(i, attempt, state)
  owed[#owed + 1] = i - 1
  owed[#owed + 1] = attempt
  owed[#owed + 1] = state
end
local function wait_until(at)
  if earliest == nil or at < earliest then earliest = at end
end
-- The invocation ends here without another attempt (cancelled, or its deadline passed).
local function end_now(i, e, state, ran, dead, why)
  flow_leave(flow, i, e.field, s, id, now)
  local m = {state = state, attempt = ran, token = token, dead = dead, dlq = false}
  s.put(e.field, ended_marker(state, ran, token, dead))
  local last = s.hash['relay:reason:' .. e.field]
  s.put('relay:reason:' .. e.field, why .. (last and last ~= '' and
        (' (last attempt: ' .. last .. ')') or ''))
  markers[i] = m
  return m
end
for i, e in ipairs(plan) do
  local m = markers[i]
  local attempt = nil
  -- docs/pipeline.md "Cancellation": what has not started does not start; a running attempt
  -- is stopped by its worker and recorded by its *complete*.
  local cancel = cancel_request(s, e.field)
  if cancel and not terminal(m) and not held(m) and not owes_dlq(m) then
    m = end_now(i, e, 'cancelled', m and m.attempt or 0, cancel.dead, 'cancelled')
  end
  if not m then
    attempt = 1
  elseif owes_dlq(m) then
    owe(i, m.attempt, m.state)
  elseif m.state == 'failed' then
    local gone = now < m.next and expiry(limits[e.field], born, m.attempt + 1)
    if gone and now >= gone then
      attempt = m.attempt + 1  -- its deadline passed during the backoff: ended below
    elseif now < m.next then
      -- A deadline that comes first ends the wait then (docs/apps.md "Deadlines").
      wait_until(gone and gone < m.next and gone or m.next)
    elseif m.attempt >= e.max then
      s.put(e.field, 'exhausted:' .. m.attempt .. ':' .. token)
      owe(i, m.attempt, 'exhausted')
    else
      attempt = m.attempt + 1
    end
  end
  local gone, why = nil, nil
  if attempt then gone, why = expiry(limits[e.field], born, attempt) end
  if gone and now >= gone then
    -- docs/apps.md "Deadlines": no further attempt starts; dead-lettered with the reason.
    end_now(i, e, 'expired', attempt - 1, false, why)
    owe(i, attempt - 1, 'expired')
    attempt = nil
  end
  if attempt then
    local how = string.sub(mask, i, i)
    local g = flow.gates[i]
    local gate = nil
    if g and how ~= 'n' and not paused_app(e.field) then
      gate = flow_gate(flow, g, e, s, id, attempt, now, may_take_over)
    end
    if paused_app(e.field) then
      parked_for[#parked_for + 1] = string.match(e.field, '^([^/]*)')
      if gone then wait_until(gone) end  -- dead-lettered at its deadline, paused or not
    elseif gate and gate[1] == 'superseded' then
      -- A newer event of its key replaced it before it ever ran: nothing is owed.
      s.put(e.field, 'superseded:0:' .. gate[2])
      flow_leave(flow, i, e.field, s, id, now)
      stat(flow.stats, e.field, 'superseded', 1)
      flow_note(flow, 'superseded', i, gate[2])
    elseif gate then
      flow_wait(flow, i, e, s, gate[3], gate[2])
      if gate[2] > 0 then wait_until(gate[2]) else queued = true end
      if gone then wait_until(gone) end  -- its deadline ends the wait (docs/apps.md)
    elseif how == 'r' then
      local hold = math.min(e.timeout + grace, lease) + margin
      s.put(e.field, 'claimed:' .. attempt .. ':' .. token .. ':' .. (now + hold))
      if g then flow_take(flow, g, e, s, id, token, now + hold, now) end
      s.flush()
      reindex(s, plan, due, id)
      local unjournaled = 0
      if started ~= '' then unjournaled = journal(attempts, e.field .. '#' .. attempt, started, ttl) end
      return flow_reply(flow, {'run', i - 1, attempt, unjournaled})
    elseif how == 's' then
      s.flush()
      reindex(s, plan, due, id)
      return flow_reply(flow, {'slot', i - 1})
    else
      -- another worker (or this one, later) may run it; its deadline may come first
      wait_until(gone and gone < now + elsewhere and gone or now + elsewhere)
    end
  end
end
s.flush()
if earliest == nil and #parked_for == 0 and not queued then
  reindex(s, plan, due, id)
  if #owed > 0 then
    local reply = {'owes'}
    for _, v in ipairs(owed) do reply[#reply + 1] = v end
    return flow_reply(flow, reply)
  end
  return flow_reply(flow, {'done'})
end
-- Nothing can start now: the message waits on an index (the due index, the paused queue, its
-- keys' queues), held by the parking consumer, which nothing reclaims from; the pollers take it
-- back when it is due, its app resumed or its key woke it.
if earliest then redis.call('ZADD', due, earliest, id) else redis.call('ZREM', due, id) end
for _, app in ipairs(parked_for) do redis.call('ZADD', paused_queue, 0, app .. '\n' .. id) end
redis.call('XCLAIM', stream, group, parking, 0, id, 'JUSTID')
local reply = {'pending', earliest or 0}
for _, app in ipairs(parked_for) do reply[#reply + 1] = app end
return flow_reply(flow, reply)
)LUA";

// A claimed invocation's handler started: from now on its attempt counts even if its worker
// dies (docs/pipeline.md "Claims").
constexpr const char* kBegin = R"LUA(
local key = KEYS[1]
local field, token = ARGV[1], ARGV[2]
local s = read_fields(key, {'relay:retained', field})
if s.retained() then return 'retained' end
local m = s.marker(field)
if not m or m.token ~= token then return 'lost' end
if m.state == 'claimed' then
  redis.call('HSET', key, field, 'running:' .. m.attempt .. ':' .. token .. ':' .. m.deadline)
end
return 'running'
)LUA";

// A worker reaches Redis: the clock of docs/pipeline.md "Outages".
constexpr const char* kHeartbeat = R"LUA(
local now = now_ms()
observe_clock(KEYS[1], now, tonumber(ARGV[1]), tonumber(ARGV[2]))
return now
)LUA";

constexpr const char* kComplete = R"LUA(
local key, due, stream, dlq, stats = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local attempts = KEYS[6]
local field, token, outcome, delay = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local ttl, group, id, duration = tonumber(ARGV[5]), ARGV[6], ARGV[7], ARGV[8]
local reason, tail, record_field, record = ARGV[9], ARGV[10], ARGV[11], ARGV[12]
-- The key slots the claim holds (flow_lua_library.h), the retry-after cap and delay.
local flow = flow_parse(ARGV[13])
local max_deferrals, retry_after = tonumber(ARGV[14]), tonumber(ARGV[15])
-- The finished attempt's journal record, whatever the verdict below.
local unjournaled = 0
if record_field ~= '' then unjournaled = journal(attempts, record_field, record, ttl) end
local s = read_state(key)
local m = s.marker(field)
local acked = s.retained() and 1 or 0
-- A repeat of a call whose reply was lost: the recorded verdict, nothing changed twice.
if m and m.token == token and not held(m) and m.state ~= 'corrupt' then
  return {m.deferred and 'deferred' or m.state, acked, m.dlq and 1 or 0, 0, unjournaled, 0}
end
if acked == 1 then return {'retained', 1, 0, 0, unjournaled, 0} end
-- A `claimed` marker ran too: its begin call's reply (or the call itself) was lost.
if not held(m) or m.token ~= token then return {'stale', 0, 0, 0, unjournaled, 0} end
local now = now_ms()
-- The slots of its key go back: the next waiters' turn (docs/pipeline.md "Flow control").
local woke = 0
for _, g in pairs(flow.gates) do
  if g.key then woke = woke + flow_give_back(flow, g.key, token, now) end
end
local plan = s.plan()
local max = 1
for _, e in ipairs(plan or {}) do
  if e.field == field then max = e.max end
end
stat(stats, field, 'duration_seconds', duration)
local verdict, written = 'succeeded', 0
local deferrals = tonumber(s.hash['relay:deferrals:' .. field]) or 0
-- docs/pipeline.md "Cancellation": a success stands (the cancel came too late); any other end
-- of a cancelled invocation is `cancelled`, never retried, dead-lettered only when asked.
local cancel = cancel_request(s, field)
if outcome == 'succeeded' then
  stat(stats, field, 'succeeded', 1)
  s.put(field, 'succeeded:' .. m.attempt .. ':' .. token)
elseif outcome == 'cancelled' or cancel then
  verdict = 'cancelled'
  stat(stats, field, 'cancelled', 1)
  s.put('relay:reason:' .. field, outcome == 'cancelled' and 'cancelled' or
        ('cancelled (last attempt: ' .. reason .. ')'))
  s.put('relay:tail:' .. field, tail)
  s.put(field, ended_marker('cancelled', m.attempt, token, cancel ~= nil and cancel.dead))
elseif outcome == 'deferred' and deferrals < max_deferrals then
  -- The handler asked to run again later (retry-after): not charged, up to the cap.
  verdict = 'deferred'
  stat(stats, field, 'retry_after', 1)
  s.put('relay:deferrals:' .. field, deferrals + 1)
  s.put('relay:reason:' .. field, reason)
  s.put('relay:tail:' .. field, tail)
  s.put(field, 'deferred:' .. (m.attempt - 1) .. ':' .. (now + retry_after) .. ':' .. token)
else
  stat(stats, field, 'failed', 1)
  s.put('relay:reason:' .. field, reason)
  s.put('relay:tail:' .. field, tail)
  if m.attempt >= max then
    verdict = 'exhausted'
    local text = 'exhausted:' .. m.attempt .. ':' .. token
    -- The entry is written now only when every other invocation is terminal: otherwise the
    -- message is dead-lettered once they all are, its owed entries in plan order.
    local others = true
    for _, e in ipairs(plan or {}) do
      if e.field ~= field and not terminal(s.marker(e.field)) then others = false end
    end
    if others and #ARGV > 15 and xadd_dlq(dlq, stream, group, id, 16) then
      stat(stats, field, 'dlq', 1)
      text, written = text .. ':dlq', 1
    end
    s.put(field, text)
  else
    verdict = 'failed'
    s.put(field, 'failed:' .. m.attempt .. ':' .. (now + delay) .. ':' .. token)
  end
end
if resolved(s, plan) then
  ack_and_retain(s, stream, due, group, id, ttl)
  return {verdict, 1, written, stats_failures, unjournaled, woke}
end
s.flush()
reindex(s, plan, due, id)
return {verdict, 0, written, stats_failures, unjournaled, woke}
)LUA";

constexpr const char* kRelease = R"LUA(
local key, due, attempts = KEYS[1], KEYS[2], KEYS[3]
local field, token, retry_after, id = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4]
local unjournal = ARGV[5] == '1'
local flow = flow_parse(ARGV[6])  -- the key slots the claim holds
local s = read_state(key)
if s.retained() then return 'retained' end
local plan = s.plan()
if field == '' then
  -- The caller does not know which invocation its token claimed (start's reply was lost).
  for _, e in ipairs(plan or {}) do
    local m_of = s.marker(e.field)
    if held(m_of) and m_of.token == token then field = e.field end
  end
  if field == '' then return 'not_held' end
end
local m = s.marker(field)
if not held(m) or m.token ~= token then return 'not_held' end
local now = now_ms()
s.put(field, 'failed:' .. (m.attempt - 1) .. ':' .. (now + retry_after) .. ':-')
s.flush()
reindex(s, plan, due, id)
for _, g in pairs(flow.gates) do
  if g.key then flow_give_back(flow, g.key, token, now) end
end
-- No handler ran: the record *start* kept for this attempt goes (best effort, like it).
if unjournal then redis.pcall('HDEL', attempts, field .. '#' .. m.attempt) end
return 'released'
)LUA";

constexpr const char* kRenew = R"LUA(
local key, stream = KEYS[1], KEYS[2]
local field, token, extend = ARGV[1], ARGV[2], tonumber(ARGV[3])
local group, consumer, id = ARGV[4], ARGV[5], ARGV[6]
local flow = flow_parse(ARGV[7])  -- the key slots the claim holds
local s = read_fields(key, {'relay:retained', field})
if s.retained() then return 'retained' end
local m = s.marker(field)
if not held(m) or m.token ~= token then return 'lost' end
local deadline = math.max(m.deadline, now_ms() + extend)
redis.call('HSET', key, field, m.state .. ':' .. m.attempt .. ':' .. token .. ':' .. deadline)
for _, g in pairs(flow.gates) do
  if g.key then
    redis.call('ZADD', g.key.run, 'XX', deadline, token)
    flow_keep(g.key.run)
  end
end
redis.call('XCLAIM', stream, group, consumer, 0, id, 'JUSTID')
return 'renewed'
)LUA";

constexpr const char* kWriteDlq = R"LUA(
local key, dlq, stream, due, stats = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local field, ttl, group, id = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
local s = read_state(key)
if s.retained() then return {'retained', 1} end
local m = s.marker(field)
if field == '-/-' then
  -- An unrunnable message; a recorded plan means an earlier delivery classified it.
  local text = s.hash['relay:plan']
  if text then return {'planned', text} end
  if not m then m = {state = 'exhausted', attempt = 0, token = '-', dlq = false} end
end
if not m or not (m.state == 'exhausted' or m.state == 'expired' or
                 (m.state == 'cancelled' and m.dead)) then
  return {'stale', 0}
end
local verdict = 'exists'
if not m.dlq then
  -- The failing attempt's exit reason and output tail, when this worker did not see it run.
  local reason = s.hash['relay:reason:' .. field]
  local tail = s.hash['relay:tail:' .. field]
  if reason then
    for i = 5, #ARGV, 2 do
      if ARGV[i] == 'reason' then ARGV[i + 1] = reason end
    end
    ARGV[#ARGV + 1] = 'exit_reason'
    ARGV[#ARGV + 1] = reason
  end
  if tail then
    ARGV[#ARGV + 1] = 'output_tail'
    ARGV[#ARGV + 1] = tail
  end
  if not xadd_dlq(dlq, stream, group, id, 5) then
    return redis.error_reply('DLQ ' .. dlq .. ' cannot be written')
  end
  s.put(field, m.state .. ':' .. m.attempt .. ':' .. m.token .. ':dlq')
  stat(stats, field, 'dlq', 1)
  verdict = 'written'
end
if resolved(s, s.plan()) then
  ack_and_retain(s, stream, due, group, id, ttl)
  return {verdict, 1, stats_failures}
end
s.flush()
return {verdict, 0, stats_failures}
)LUA";

// Any number of messages (a read: docs/pipeline.md "Acknowledgements in batches"), each as alone.
constexpr const char* kAcknowledge = R"LUA(
local stream, due = KEYS[1], KEYS[2]
local group, ttl = ARGV[1], tonumber(ARGV[2])
local now = nil
-- An occurrence whose schedule no longer exists leaves the PEL even with attempts left, unless
-- one of its invocations is running right now; nothing else is acknowledged unresolved.
local function obsoleteOccurrence(s, plan)
  now = now or now_ms()
  for _, e in ipairs(plan or {}) do
    if e.trigger ~= 's' then return false end
    local m = s.marker(e.field)
    if held(m) and now < m.deadline then return false end
    -- An owed DLQ entry is written first (the plan runs to write it).
    if owes_dlq(m) then return false end
  end
  return true
end
-- Resolved, or an obsolete occurrence: the message leaves the PEL.
local function leaves(s, obsolete)
  local plan = s.plan()
  return resolved(s, plan) or (obsolete and obsoleteOccurrence(s, plan))
end
-- unpack() has a stack limit: at most 1000 names per command. Returns the sum of the replies.
local function in_chunks(command, first_args, names)
  local sum = 0
  for first = 1, #names, 1000 do
    local call = {command}
    for _, a in ipairs(first_args) do call[#call + 1] = a end
    for j = first, math.min(first + 999, #names) do call[#call + 1] = names[j] end
    sum = sum + redis.call(unpack(call))
  end
  return sum
end
-- One EXISTS for all: a read of unmatched events (almost always) has no state at all.
local states = {}
for i = 3, #KEYS do states[#states + 1] = KEYS[i] end
local some_state = in_chunks('EXISTS', {}, states) > 0
-- One flat reply (a table per message would cost more than the rest of the script).
local verdicts, xacks, acked = {}, {}, {}
local function answer(verdict, detail)
  verdicts[#verdicts + 1] = verdict
  verdicts[#verdicts + 1] = detail or ''
end
for i = 3, #KEYS do
  local key, id, obsolete = KEYS[i], ARGV[2 * i - 3], ARGV[2 * i - 2] == '1'
  -- No state: never classified before (an unmatched event, almost always).
  local s = some_state and read_state(key)
  local has_state = s and next(s.hash) ~= nil
  if has_state and s.retained() then
    answer('retained')
    xacks[#xacks + 1] = id
  elseif has_state and not leaves(s, obsolete) then
    answer('unresolved', s.hash['relay:plan'])
  else
    -- The message leaves the PEL and its state is switched to retention in the same step.
    if has_state then retain(s, ttl) end
    answer('acked')
    xacks[#xacks + 1] = id
    acked[#acked + 1] = id
  end
end
if #xacks > 0 then in_chunks('XACK', {stream, group}, xacks) end
if #acked > 0 then in_chunks('ZREM', {due}, acked) end
return verdicts
)LUA";

constexpr const char* kClearMissing = R"LUA(
local stream, key, due = KEYS[1], KEYS[2], KEYS[3]
local group, id, ttl = ARGV[1], ARGV[2], tonumber(ARGV[3])
local s = read_state(key)
if s.retained() then
  redis.call('XACK', stream, group, id)
  return 'retained'
end
ack_and_retain(s, stream, due, group, id, ttl)
return 'cleared'
)LUA";

// docs/pipeline.md "Cancellation": records the request (target `*`, `<app>/*` or a field) and
// applies it to what the plan already owes: what has not started is cancelled now, a running
// attempt's worker is told through the cancels stream, a claim whose worker is gone is
// cancelled when the next *start* takes it over. A message not read yet keeps the request for
// its first *start*. Acknowledges when the plan is terminal.
constexpr const char* kCancel = R"LUA(
local key, due, stream, cancels, paused_queue = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local id, target, dead, cancel_id = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local group, ttl = ARGV[5], tonumber(ARGV[6])
-- The key gates of the recorded plan (flow_lua_library.h): a waiter cancelled leaves its key's
-- queue. Asked for again with them when the plan has gates and the caller did not know it.
local flow = flow_parse(ARGV[7] or '')
local s = read_state(key)
if s.retained() then return {'finished'} end
local plan = s.plan()
if (ARGV[7] or '') == '' and string.find(s.hash['relay:plan'] or '', '\t') then
  return {'flow', s.hash['relay:plan']}
end
local pel = redis.call('XPENDING', stream, group, id, id, 1)[1]
if not pel and not plan then
  if #redis.call('XRANGE', stream, id, id) == 0 then return {'missing'} end
  -- Delivered to the group and gone from its PEL without a plan: acknowledged (unmatched).
  local last = '0-0'
  for _, g in ipairs(redis.call('XINFO', 'GROUPS', stream)) do
    local info = {}
    for i = 1, #g, 2 do info[g[i]] = g[i + 1] end
    if info['name'] == group then last = info['last-delivered-id'] end
  end
  local function parts(text)
    local ms, seq = string.match(text, '^(%d+)-(%d+)$')
    return tonumber(ms) or 0, tonumber(seq) or 0
  end
  local ims, iseq = parts(id)
  local lms, lseq = parts(last)
  if ims < lms or (ims == lms and iseq <= lseq) then return {'finished'} end
end
s.put('relay:cancel:' .. target, dead .. ' ' .. cancel_id)
if not plan then
  s.flush()
  return {'requested'}
end
local reply = {'applied'}
local now = now_ms()
local wanted_app = string.match(target, '^(.*)/%*$')
for i, e in ipairs(plan) do
  if target == '*' or target == e.field or wanted_app == string.match(e.field, '^([^/]*)') then
    local m = s.marker(e.field)
    reply[#reply + 1] = e.field
    if terminal(m) or owes_dlq(m) or (m and m.state == 'corrupt') then
      reply[#reply + 1] = 'finished'
      reply[#reply + 1] = ''
    elseif held(m) and now < m.deadline then
      redis.call('XADD', cancels, 'MAXLEN', '~', 10000, '*', 'id', id, 'field', e.field,
                 'token', m.token, 'cancel', cancel_id)
      reply[#reply + 1] = 'running'
      reply[#reply + 1] = m.token
    elseif held(m) then
      -- Its worker is gone: the *start* that takes the claim over cancels it.
      redis.call('ZADD', due, now, id)
      reply[#reply + 1] = 'orphaned'
      reply[#reply + 1] = m.token
    else
      local ran = m and m.attempt or 0
      flow_leave(flow, i, e.field, s, id, now)  -- it may have waited for its flow control
      local last = s.hash['relay:reason:' .. e.field]
      s.put(e.field, ended_marker('cancelled', ran, cancel_id, dead == '1'))
      s.put('relay:reason:' .. e.field, 'cancelled' .. (last and last ~= '' and
            (' (last attempt: ' .. last .. ')') or ''))
      reply[#reply + 1] = 'cancelled'
      reply[#reply + 1] = ''
    end
  end
end
if resolved(s, plan) then
  ack_and_retain(s, stream, due, group, id, ttl)
  for _, e in ipairs(plan) do
    redis.call('ZREM', paused_queue, string.match(e.field, '^([^/]*)') .. '\n' .. id)
  end
  reply[1] = 'acked'
  return reply
end
s.flush()
-- What is left runs (or waits) as before; an owed DLQ entry is written by the next delivery.
local owes = false
for _, e in ipairs(plan) do owes = owes or owes_dlq(s.marker(e.field)) end
if owes then redis.call('ZADD', due, now, id) else reindex(s, plan, due, id) end
return reply
)LUA";

// One attempt's record alone (the runtime could not start the handler); *start* and *complete*
// write theirs in their own step.
constexpr const char* kJournal = R"LUA(
if journal(KEYS[1], ARGV[1], ARGV[2], tonumber(ARGV[3])) == 1 then
  return redis.error_reply('attempt journal ' .. KEYS[1] .. ' cannot be written')
end
return 'OK'
)LUA";

redis::Script script(const char* body) {
  return redis::Script(std::string(kLifecycleLuaLibrary) + body);
}

// A script that takes flow control part too.
redis::Script flowScript(const char* body) {
  return redis::Script(std::string(kLifecycleLuaLibrary) + kFlowLuaLibrary + body);
}

}  // namespace

LifecycleScripts::LifecycleScripts()
    : start(flowScript(kStart)),
      begin(script(kBegin)),
      heartbeat(script(kHeartbeat)),
      complete(flowScript(kComplete)),
      release(flowScript(kRelease)),
      renew(flowScript(kRenew)),
      write_dlq(script(kWriteDlq)),
      acknowledge(script(kAcknowledge)),
      clear_missing(script(kClearMissing)),
      journal(script(kJournal)),
      cancel(flowScript(kCancel)) {}

const LifecycleScripts& LifecycleScripts::shared() {
  static const LifecycleScripts scripts;
  return scripts;
}

}  // namespace relay::invocation
