#include "catalog/occurrence_publication.h"

#include "catalog/publication_check.h"

namespace relay::catalog {
namespace {

// KEYS: dedupe key, stream. ARGV: ttl-ms, then the entry's field/value pairs.
// Returns {1, entry-id} when this call published the occurrence, {0, id-of-the-first} when a
// call (of any worker or backfill) already had. EXISTS before XADD, so a failing XADD leaves no
// key behind.
constexpr const char* kPublish = R"LUA(
local key, stream, ttl = KEYS[1], KEYS[2], ARGV[1]
if redis.call('EXISTS', key) == 1 then
  return {0, redis.call('GET', key)}
end
local fields = {}
for i = 2, #ARGV do fields[#fields + 1] = ARGV[i] end
local id = redis.call('XADD', stream, '*', unpack(fields))
redis.call('SET', key, id, 'PX', ttl)
return {1, id}
)LUA";

}  // namespace

OccurrencePublication::OccurrencePublication(std::string stream,
                                             std::chrono::milliseconds record_ttl)
    : stream_(std::move(stream)), record_ttl_(record_ttl), script_(kPublish) {}

redis::Result<OccurrencePublication::Outcome> OccurrencePublication::publish(
    redis::Connection& redis, const schedule::Occurrence& occurrence,
    std::string_view payload_json) const {
  auto reply =
      redis.eval(script_, {occurrenceKey(stream_, occurrence), stream_},
                 {std::to_string(record_ttl_.count()), std::string(schedule::kEnvelopeField),
                  occurrence.envelope(), "event", occurrence.payload(payload_json)});
  if (!reply.ok()) return reply.error();
  auto created = reply->at(0);
  if (!created.ok()) return created.error();
  auto flag = created->integer();
  if (!flag.ok()) return flag.error();
  auto id = reply->at(1);
  if (!id.ok()) return id.error();
  auto text = id->string();
  if (!text.ok()) return text.error();
  return Outcome{*flag == 1, std::string(*text)};
}

}  // namespace relay::catalog
