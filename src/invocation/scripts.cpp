#include "invocation/scripts.h"

namespace relay::invocation {
namespace {

// Shared prologue: split a marker into its colon-separated parts.
constexpr const char* kSplit = R"LUA(
local function split(text)
  local parts = {}
  for part in string.gmatch(text, '[^:]+') do parts[#parts + 1] = part end
  return parts
end
local function retained(key)
  return redis.call('HEXISTS', key, 'relay:retained') == 1
end
-- The attempt number when `field` is claimed by `token`, else nil (a stale or unknown claim).
local function claimedAttempt(key, field, token)
  local marker = redis.call('HGET', key, field)
  if not marker then return nil end
  local p = split(marker)
  if p[1] ~= 'running' or p[3] ~= token then return nil end
  return tonumber(p[2])
end
)LUA";

constexpr const char* kTryStart = R"LUA(
local key, field = KEYS[1], ARGV[1]
local now, token, deadline, max_attempts = tonumber(ARGV[2]), ARGV[3], ARGV[4], tonumber(ARGV[5])
if retained(key) then return {'retained', 0, ''} end
local function claim(attempt)
  redis.call('HSET', key, field, 'running:' .. attempt .. ':' .. token .. ':' .. deadline)
  return {'run', attempt, token}
end
local function exhaust(attempt)
  redis.call('HSET', key, field, 'exhausted:' .. attempt .. ':' .. token)
  return {'exhausted', attempt, token}
end
local marker = redis.call('HGET', key, field)
if not marker then return claim(1) end
local p = split(marker)
local attempt = tonumber(p[2]) or 0
if p[1] == 'succeeded' then return {'succeeded', attempt, ''} end
if p[1] == 'exhausted' then
  if p[4] == 'dlq' then return {'dlq', attempt, p[3]} end
  return {'exhausted', attempt, p[3]}
end
if p[1] == 'failed' then
  if now < tonumber(p[3]) then return {'wait', attempt, p[3]} end
  if attempt >= max_attempts then return exhaust(attempt) end
  return claim(attempt + 1)
end
if p[1] == 'running' then
  if now < tonumber(p[4]) then return {'busy', attempt, p[4]} end
  -- The claim expired: its worker died during attempt N, which counts as a failed attempt.
  if attempt >= max_attempts then return exhaust(attempt) end
  return claim(attempt + 1)
end
return {'corrupt', 0, marker}
)LUA";

constexpr const char* kComplete = R"LUA(
local key, field, token, outcome = KEYS[1], ARGV[1], ARGV[2], ARGV[3]
local next_at, max_attempts = ARGV[4], tonumber(ARGV[5])
if retained(key) then return 'retained' end
local attempt = claimedAttempt(key, field, token)
if not attempt then return 'stale' end
if outcome == 'succeeded' then
  redis.call('HSET', key, field, 'succeeded:' .. attempt)
  return 'succeeded'
end
if attempt >= max_attempts then
  redis.call('HSET', key, field, 'exhausted:' .. attempt .. ':' .. token)
  return 'exhausted'
end
redis.call('HSET', key, field, 'failed:' .. attempt .. ':' .. next_at)
return 'failed'
)LUA";

constexpr const char* kRelease = R"LUA(
local key, field, token = KEYS[1], ARGV[1], ARGV[2]
if retained(key) then return 'retained' end
local attempt = claimedAttempt(key, field, token)
if not attempt then return 'stale' end
if attempt <= 1 then
  redis.call('HDEL', key, field)
else
  redis.call('HSET', key, field, 'failed:' .. (attempt - 1) .. ':0')
end
return 'released'
)LUA";

constexpr const char* kWriteDlq = R"LUA(
local key, dlq, field = KEYS[1], KEYS[2], ARGV[1]
if retained(key) then return 'retained' end
local marker = redis.call('HGET', key, field)
if field == '-/-' and not marker then
  marker = 'exhausted:0:-'
end
if not marker then return 'stale' end
local p = split(marker)
if p[1] ~= 'exhausted' then return 'stale' end
if p[4] == 'dlq' then return 'exists' end
local entry = {}
for i = 2, #ARGV do entry[#entry + 1] = ARGV[i] end
redis.call('XADD', dlq, '*', unpack(entry))
redis.call('HSET', key, field, marker .. ':dlq')
return 'written'
)LUA";

constexpr const char* kAckAndRetain = R"LUA(
local stream, key = KEYS[1], KEYS[2]
local group, id, ttl = ARGV[1], ARGV[2], tonumber(ARGV[3])
local acked = redis.call('XACK', stream, group, id)
if retained(key) then return acked end  -- a stale delivery must not touch the retention TTL
redis.call('HSET', key, 'relay:retained', '1')
if ttl > 0 then redis.call('PEXPIRE', key, ttl) end
return acked
)LUA";

std::string withPrologue(const char* body) { return std::string(kSplit) + body; }

}  // namespace

Scripts::Scripts()
    : try_start(withPrologue(kTryStart)),
      complete(withPrologue(kComplete)),
      release(withPrologue(kRelease)),
      write_dlq(withPrologue(kWriteDlq)),
      ack_and_retain(withPrologue(kAckAndRetain)) {}

}  // namespace relay::invocation
