#include "stream/group_reader.h"

#include "redis/errors.h"
#include "stream/group_keeper.h"

namespace relay::stream {

std::vector<std::string> GroupReader::command(int count, bool block) const {
  std::vector<std::string> argv = {"XREADGROUP",       "GROUP", settings_.group,
                                   settings_.consumer, "COUNT", std::to_string(count)};
  if (block) argv.insert(argv.end(), {"BLOCK", std::to_string(settings_.block.count())});
  argv.insert(argv.end(), {"STREAMS", settings_.stream, ">"});
  return argv;
}

redis::Status GroupReader::ensureGroup(redis::Connection& redis) const {
  auto ensured = stream::ensureGroup(redis, {settings_.stream, settings_.group});
  if (!ensured.ok()) return ensured.error();
  // Logged once, by whichever worker's housekeeper takes it (Housekeeper::reportRecreation).
  if (ensured->kind == GroupEnsured::Kind::kRecreated) metrics_.countGroupRecreated();
  return {};
}

redis::Error GroupReader::failed(redis::Connection& redis, redis::Error error) {
  // The worker stopping ended the read (Connection::interrupt): no fault of Redis.
  if (redis.interrupted()) return error;
  metrics_.countRedisError("xreadgroup");
  health_.failed(error);
  // The group vanished (XGROUP DESTROY, FLUSHALL): create it again.
  if (redis::isReplyError(error, "NOGROUP")) (void)ensureGroup(redis);
  return error;
}

redis::Status GroupReader::request(redis::Connection& redis, int count) {
  auto sent = redis.appendCommand(command(count, /*block=*/false), settings_.limits);
  if (sent.ok()) sent = redis.flush();
  if (!sent.ok()) return failed(redis, sent.error());
  return {};
}

redis::Result<std::vector<StreamEntry>> GroupReader::take(redis::Connection& redis, int count) {
  auto reply = redis.getReply();
  // A cluster moved the stream's slot: the read never ran; make it again as it was sent
  // (without BLOCK), following the redirect, with no failure to count.
  if (!reply.ok() &&
      (redis::isReplyError(reply.error(), "MOVED") || redis::isReplyError(reply.error(), "ASK"))) {
    return readNow(redis, count, /*block=*/false);
  }
  if (!reply.ok()) return failed(redis, reply.error());
  health_.healthy();
  return parseReadGroup(reply->view());
}

redis::Result<std::vector<StreamEntry>> GroupReader::read(redis::Connection& redis, int count) {
  return readNow(redis, count, /*block=*/true);
}

redis::Result<std::vector<StreamEntry>> GroupReader::readNow(redis::Connection& redis, int count,
                                                             bool block) {
  // command(), unlike request(), follows a cluster's MOVED.
  auto reply = redis.command(command(count, block), settings_.limits);
  if (!reply.ok()) return failed(redis, reply.error());
  health_.healthy();
  return parseReadGroup(reply->view());
}

}  // namespace relay::stream
