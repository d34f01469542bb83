#include "stream/idle_claims.h"

#include "redis/script.h"

namespace relay::stream {
namespace {

// KEYS: stream, then each id's state hash. ARGV: group, consumer, min-idle-ms, poison deaths
// (0: never), bytes of a poison message's event to return, then each id and whether its owner
// died (1|0), in the order of KEYS.
// Returns {entries taken as [id, [field, value, ...]], ids whose entry is gone,
// poison messages as [id, deaths, event size, the event's first bytes]}.
constexpr const char* kClaimIdle = R"LUA(
local stream = KEYS[1]
local group, consumer, min_idle = ARGV[1], ARGV[2], ARGV[3]
local poison_deaths, shown = tonumber(ARGV[4]), tonumber(ARGV[5])
local taken, gone, poison = {}, {}, {}
for k = 2, #KEYS do
  local state, id, dead = KEYS[k], ARGV[2 * k + 2], ARGV[2 * k + 3] == '1'
  local entry = redis.call('XRANGE', stream, id, id)[1]
  if not entry then
    if redis.call('XPENDING', stream, group, id, id, 1)[1] then gone[#gone + 1] = id end
  else
    -- docs/pipeline.md "Poison messages": a message whose workers keep dying while they hold
    -- it, before its plan was ever recorded, is counted; at the limit it is not delivered again.
    local deaths = 0
    if dead and poison_deaths > 0 and redis.call('HEXISTS', state, 'relay:plan') == 0 then
      deaths = redis.call('HINCRBY', state, 'relay:deaths', 1)
    end
    if poison_deaths > 0 and deaths >= poison_deaths then
      local event = ''
      for i = 1, #entry[2], 2 do
        if entry[2][i] == 'event' then event = entry[2][i + 1]; break end
      end
      poison[#poison + 1] = {id, deaths, #event, string.sub(event, 1, shown)}
    else
      local claimed = redis.call('XCLAIM', stream, group, consumer, min_idle, id)
      if claimed[1] then taken[#taken + 1] = claimed[1] end
    end
  end
end
return {taken, gone, poison}
)LUA";

redis::Error unexpectedReply(std::string message) {
  return {redis::ErrorKind::kProtocol, "unexpected reply: " + std::move(message)};
}

}  // namespace

redis::Result<std::vector<GroupConsumer>> groupConsumers(redis::Connection& redis,
                                                         std::string_view stream,
                                                         std::string_view group) {
  auto reply = redis.command({"XINFO", "CONSUMERS", stream, group});
  if (!reply.ok()) return reply.error();
  auto rows = reply->elements();
  if (!rows.ok()) return rows.error();
  std::vector<GroupConsumer> consumers;
  for (const redis::ReplyView row : *rows) {
    auto fields = row.elements();
    if (!fields.ok()) return fields.error();
    GroupConsumer consumer;
    for (std::size_t i = 0; i + 1 < fields->size(); i += 2) {
      auto name = (*fields)[i].string();
      if (!name.ok()) continue;
      if (*name == "name") {
        auto value = (*fields)[i + 1].string();
        if (!value.ok()) return unexpectedReply("XINFO CONSUMERS name");
        consumer.name = std::string(*value);
      } else if (*name == "pending") {
        auto value = (*fields)[i + 1].integer();
        if (!value.ok()) return unexpectedReply("XINFO CONSUMERS pending");
        consumer.pending = *value;
      }
    }
    consumers.push_back(std::move(consumer));
  }
  return consumers;
}

redis::Result<AutoClaimPage> claimIdle(redis::Connection& redis, const invocation::StreamKeys& keys,
                                       std::string_view consumer,
                                       std::chrono::milliseconds min_idle,
                                       const std::vector<IdleMessage>& messages,
                                       const PoisonRule& poison, const redis::ReplyLimits* limits) {
  static const redis::Script script(kClaimIdle);
  std::vector<std::string> script_keys = {keys.stream};
  std::vector<std::string> args = {keys.group, std::string(consumer),
                                   std::to_string(min_idle.count()), std::to_string(poison.deaths),
                                   std::to_string(poison.shown)};
  for (const IdleMessage& message : messages) {
    script_keys.push_back(keys.state(message.id));
    args.push_back(message.id);
    args.push_back(message.owner_dead ? "1" : "0");
  }
  auto reply = redis.eval(script, script_keys, args, limits);
  if (!reply.ok()) return reply.error();
  auto page = parseClaimed(reply->view());
  if (!page.ok()) return page.error();
  auto poisoned = reply->at(2);
  if (!poisoned.ok()) return page;
  auto rows = poisoned->elements();
  if (!rows.ok()) return rows.error();
  for (const redis::ReplyView row : *rows) {
    auto id = row.at(0);
    auto deaths = row.at(1);
    auto size = row.at(2);
    auto head = row.at(3);
    if (!id.ok() || !deaths.ok() || !size.ok() || !head.ok() || !id->string().ok() ||
        !deaths->integer().ok() || !size->integer().ok() || !head->string().ok()) {
      return unexpectedReply("poison row");
    }
    page->poison.push_back({std::string(*id->string()), *deaths->integer(), *size->integer(),
                            std::string(*head->string())});
  }
  return page;
}

redis::Result<AutoClaimPage> parseClaimed(redis::ReplyView reply) {
  auto entries = reply.at(0);
  auto gone = reply.at(1);
  if (!entries.ok() || !gone.ok()) return unexpectedReply("not {entries, gone}");
  auto parsed = parseEntries(*entries);
  if (!parsed.ok()) return parsed.error();
  AutoClaimPage page;
  page.entries = std::move(parsed).value();
  auto ids = gone->elements();
  if (!ids.ok()) return ids.error();
  for (const redis::ReplyView id : *ids) {
    auto text = id.string();
    if (!text.ok()) return text.error();
    page.deleted.emplace_back(*text);
  }
  return page;
}

}  // namespace relay::stream
