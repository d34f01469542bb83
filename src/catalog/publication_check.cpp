#include "catalog/publication_check.h"

#include "invocation/keys.h"

namespace relay::catalog {

std::string occurrenceKey(std::string_view stream, const schedule::Occurrence& occurrence) {
  return invocation::StreamKeys{std::string(stream), ""}.prefix() + "occ:" + occurrence.app + ":" +
         occurrence.schedule + ":" + occurrence.scheduledAtText();
}

Result<bool> RedisPublicationCheck::publishedAs(const schedule::Occurrence& occurrence,
                                                std::string_view message_id) {
  return holds({"GET", occurrenceKey(stream_, occurrence)}, message_id);
}

Result<bool> RedisPublicationCheck::copiedAs(const ReplayCopy& copy, std::string_view message_id) {
  const invocation::StreamKeys keys{stream_, copy.group};
  const std::string& original =
      copy.mode == ReplayCopy::Mode::kDeadLetter ? copy.dlq_id : copy.original_id;
  return holds({"HGET", keys.replayCopies(copy.replay), original}, message_id);
}

Result<bool> RedisPublicationCheck::holds(const std::vector<std::string>& command,
                                          std::string_view expected) {
  std::lock_guard lock(mutex_);
  if (!connection_ || !connection_->ok()) {
    auto connected = redis::Connection::create(endpoint_);
    if (!connected.ok()) return connected.error().toRelay();
    connection_ = std::move(connected).value();
  }
  auto reply = connection_->command(command);
  if (!reply.ok()) return reply.error().toRelay();
  auto value = reply->optionalString();
  if (!value.ok()) return value.error().toRelay();
  return value->has_value() && **value == expected;
}

}  // namespace relay::catalog
