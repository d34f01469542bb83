#include "stream/group_keeper.h"

#include "common/whole_number.h"
#include "redis/script.h"

namespace relay::stream {
namespace {

// KEYS: stream, record. ARGV: group. The position is read and the group created in one step,
// so two workers finding the group missing create it once, at the same place.
constexpr const char* kEnsureGroup = R"LUA(
local stream, record, group = KEYS[1], KEYS[2], ARGV[1]
local position = redis.call('HGET', record, 'position')
local created = redis.pcall('XGROUP', 'CREATE', stream, group, position or '0', 'MKSTREAM')
if type(created) == 'table' and created.err then
  if string.find(created.err, '^BUSYGROUP') then return {'existed', ''} end
  if position then
    return redis.error_reply('the position ' .. position .. ' recorded in ' .. record ..
      ' cannot be used (' .. created.err .. '): DEL it to create the group at 0')
  end
  return created
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if position then
  redis.call('HSET', record, 'recreated_ms', now, 'recreated_at', position, 'unreported', '1')
  return {'recreated', position}
end
redis.call('HSET', record, 'position', '0-0', 'last_delivered', '0-0', 'created_ms', now)
return {'created', '0-0'}
)LUA";

const redis::Script& ensureScript() {
  static const redis::Script script(kEnsureGroup);
  return script;
}

redis::Error unexpectedGroupReply(std::string message) {
  return {redis::ErrorKind::kProtocol, std::move(message)};
}

}  // namespace

redis::Result<GroupEnsured> ensureGroup(redis::Connection& redis,
                                        const invocation::StreamKeys& keys) {
  auto reply = redis.eval(ensureScript(), {keys.stream, keys.groupRecord()}, {keys.group});
  if (!reply.ok()) return reply.error();
  auto verdict = reply->at(0);
  auto at = reply->at(1);
  if (!verdict.ok() || !at.ok() || !verdict->string().ok() || !at->string().ok()) {
    return unexpectedGroupReply("ensure group: unexpected reply");
  }
  GroupEnsured ensured;
  ensured.at = std::string(*at->string());
  if (*verdict->string() == "created") {
    ensured.kind = GroupEnsured::Kind::kCreated;
  } else if (*verdict->string() == "recreated") {
    ensured.kind = GroupEnsured::Kind::kRecreated;
  }
  return ensured;
}

StreamId resumePosition(const StreamId& last_delivered,
                        const std::optional<StreamId>& first_pending) {
  if (!first_pending || *first_pending > last_delivered) return last_delivered;
  if (first_pending->seq > 0) return {first_pending->ms, first_pending->seq - 1};
  if (first_pending->ms > 0) return {first_pending->ms - 1, UINT64_MAX};
  return {0, 0};
}

redis::Status recordGroupPosition(redis::Connection& redis, const invocation::StreamKeys& keys,
                                  const StreamId& last_delivered,
                                  const std::optional<StreamId>& first_pending) {
  auto written = redis.command({"HSET", keys.groupRecord(), "position",
                                resumePosition(last_delivered, first_pending).toString(),
                                "last_delivered", last_delivered.toString()});
  if (!written.ok()) return written.error();
  return {};
}

redis::Result<std::optional<GroupRecreation>> takeRecreation(redis::Connection& redis,
                                                             const invocation::StreamKeys& keys) {
  auto taken = redis.command({"HDEL", keys.groupRecord(), "unreported"});
  if (!taken.ok()) return taken.error();
  if (!taken->integer().ok() || *taken->integer() == 0) return std::optional<GroupRecreation>{};
  auto details = redis.command({"HMGET", keys.groupRecord(), "recreated_at", "recreated_ms"});
  if (!details.ok()) return details.error();
  GroupRecreation recreation;
  auto at = details->at(0);
  auto when = details->at(1);
  if (at.ok() && at->string().ok()) recreation.at = std::string(*at->string());
  if (when.ok() && when->string().ok()) (void)parseWholeNumber(*when->string(), recreation.when_ms);
  return std::optional<GroupRecreation>(std::move(recreation));
}

}  // namespace relay::stream
