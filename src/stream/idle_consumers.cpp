#include "stream/idle_consumers.h"

namespace relay::stream {
namespace {

// KEYS: stream. ARGV: group, threshold (ms), self, the parking consumer. Returns the names
// deleted.
constexpr const char* kDeleteIdleScript = R"LUA(
local ok, consumers = pcall(redis.call, 'XINFO', 'CONSUMERS', KEYS[1], ARGV[1])
if not ok then return {} end
local deleted = {}
for _, c in ipairs(consumers) do
  local info = {}
  for i = 1, #c, 2 do info[c[i]] = c[i + 1] end
  if info['name'] ~= ARGV[3] and info['name'] ~= ARGV[4] and tonumber(info['pending']) == 0
      and tonumber(info['idle']) > tonumber(ARGV[2]) then
    redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], info['name'])
    deleted[#deleted + 1] = info['name']
  end
end
return deleted
)LUA";

}  // namespace

IdleConsumers::IdleConsumers(invocation::StreamKeys keys, std::string self, Settings settings)
    : keys_(std::move(keys)),
      self_(std::move(self)),
      settings_(settings),
      script_(kDeleteIdleScript) {}

Result<std::vector<std::string>> IdleConsumers::deleteIdle(redis::Connection& redis) const {
  auto reply = redis.eval(script_, {keys_.stream},
                          {keys_.group, std::to_string(settings_.threshold.count()), self_,
                           std::string(invocation::kParkingConsumer)});
  if (!reply.ok()) return reply.error().toRelay();
  auto names = reply->elements();
  if (!names.ok()) return names.error().toRelay();
  std::vector<std::string> deleted;
  for (const redis::ReplyView name : *names) {
    if (auto text = name.string(); text.ok()) deleted.emplace_back(*text);
  }
  return deleted;
}

}  // namespace relay::stream
