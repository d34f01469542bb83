#include "stream/group_reader.h"

#include "redis/errors.h"

namespace relay::stream {

std::vector<std::string> GroupReader::command(int count) const {
  return {"XREADGROUP",
          "GROUP",
          settings_.group,
          settings_.consumer,
          "COUNT",
          std::to_string(count),
          "BLOCK",
          std::to_string(settings_.block.count()),
          "STREAMS",
          settings_.stream,
          ">"};
}

redis::Status GroupReader::ensureGroup(redis::Connection& redis) const {
  auto created =
      redis.command({"XGROUP", "CREATE", settings_.stream, settings_.group, "0", "MKSTREAM"});
  if (!created.ok() && !redis::isReplyError(created.error(), "BUSYGROUP")) {
    return created.error();
  }
  return {};
}

redis::Error GroupReader::failed(redis::Connection& redis, redis::Error error) {
  metrics_.countRedisError("xreadgroup");
  health_.failed(error);
  // The group vanished (XGROUP DESTROY, FLUSHALL): create it again.
  if (redis::isReplyError(error, "NOGROUP")) (void)ensureGroup(redis);
  return error;
}

redis::Status GroupReader::request(redis::Connection& redis, int count) {
  auto sent = redis.appendCommand(command(count));
  if (sent.ok()) sent = redis.flush();
  if (!sent.ok()) return failed(redis, sent.error());
  return {};
}

redis::Result<std::vector<StreamEntry>> GroupReader::take(redis::Connection& redis) {
  auto reply = redis.getReply();
  if (!reply.ok()) return failed(redis, reply.error());
  health_.healthy();
  return parseReadGroup(reply->view());
}

redis::Result<std::vector<StreamEntry>> GroupReader::read(redis::Connection& redis, int count) {
  // command(), unlike request(), follows a cluster's MOVED.
  auto reply = redis.command(command(count));
  if (!reply.ok()) return failed(redis, reply.error());
  health_.healthy();
  return parseReadGroup(reply->view());
}

}  // namespace relay::stream
