#include "stream/trimmer.h"

#include <utility>

namespace relay::stream {
namespace {

redis::Error protocol(std::string message) {
  return {redis::ErrorKind::kProtocol, std::move(message)};
}

redis::Result<StreamId> idOf(redis::ReplyView reply, std::string_view what) {
  auto text = reply.string();
  if (!text.ok()) return text.error();
  auto id = StreamId::parse(*text);
  if (!id) return protocol(std::string(what) + ": not a stream id: \"" + std::string(*text) + "\"");
  return *id;
}

// One element of XINFO GROUPS: a flat array of field names and values.
redis::Result<GroupPosition> parseGroup(redis::ReplyView group) {
  auto items = group.elements();
  if (!items.ok()) return items.error();
  GroupPosition position;
  bool has_name = false;
  bool has_last = false;
  for (std::size_t i = 0; i + 1 < items->size(); i += 2) {
    auto key = (*items)[i].string();
    if (!key.ok()) continue;
    if (*key == "name") {
      auto name = (*items)[i + 1].string();
      if (!name.ok()) return name.error();
      position.name = std::string(*name);
      has_name = true;
    } else if (*key == "last-delivered-id") {
      auto id = idOf((*items)[i + 1], "XINFO GROUPS last-delivered-id");
      if (!id.ok()) return id.error();
      position.last_delivered = *id;
      has_last = true;
    }
  }
  if (!has_name || !has_last) {
    return protocol("XINFO GROUPS: an entry without name or last-delivered-id");
  }
  return position;
}

}  // namespace

Trimmer::Trimmer(invocation::StreamKeys keys, RetentionSettings settings,
                 observability::Metrics& metrics, observability::Logger& logger, Clock& clock)
    : keys_(std::move(keys)),
      settings_(settings),
      metrics_(metrics),
      logger_(logger),
      clock_(clock) {}

redis::Result<std::vector<GroupPosition>> Trimmer::groupPositions(redis::Connection& redis,
                                                                  const std::string& stream) {
  auto info = redis.command({"XINFO", "GROUPS", stream});
  if (!info.ok()) {
    if (redis::isReplyError(info.error(), "ERR") &&
        info.error().message.find("no such key") != std::string::npos) {
      return std::vector<GroupPosition>{};
    }
    return info.error();
  }
  auto groups = info->elements();
  if (!groups.ok()) return groups.error();
  std::vector<GroupPosition> positions;
  for (const redis::ReplyView& group : *groups) {
    auto position = parseGroup(group);
    if (!position.ok()) return position.error();
    positions.push_back(std::move(position).value());
  }
  if (positions.empty()) return positions;
  // Only now the pending ids: an entry delivered after XINFO is above the last-delivered id
  // read, so whether it is pending by the time XPENDING runs cannot matter.
  std::vector<std::vector<std::string>> commands;
  for (const GroupPosition& position : positions) {
    commands.push_back({"XPENDING", stream, position.name});
  }
  auto replies = redis.pipeline(commands);
  if (!replies.ok()) return replies.error();
  for (std::size_t i = 0; i < positions.size(); ++i) {
    const auto& reply = (*replies)[i];
    if (!reply.ok()) return reply.error();
    if (auto count = reply->at(0); count.ok() && count->integer().ok()) {
      positions[i].pending = *count->integer();
    }
    auto smallest = reply->at(1);
    if (!smallest.ok()) return smallest.error();
    if (smallest->isNil()) continue;
    auto id = idOf(*smallest, "XPENDING smallest id");
    if (!id.ok()) return id.error();
    positions[i].first_pending = *id;
  }
  return positions;
}

redis::Result<long long> Trimmer::trimStream(redis::Connection& redis, TrimReport& report) {
  auto positions = groupPositions(redis, keys_.stream);
  if (!positions.ok()) return positions.error();
  report.stream_min_id = streamTrimId(*positions, clock_.now(), settings_.stream);
  if (!report.stream_min_id) return 0LL;
  auto trimmed =
      redis.command({"XTRIM", keys_.stream, "MINID", "=", report.stream_min_id->toString()});
  if (!trimmed.ok()) return trimmed.error();
  return trimmed->integer();
}

redis::Result<long long> Trimmer::trimDlq(redis::Connection& redis) {
  const std::optional<StreamId> cutoff = ageTrimId(clock_.now(), settings_.dlq);
  if (!cutoff) return 0LL;
  auto trimmed = redis.command({"XTRIM", keys_.dlq(), "MINID", "=", cutoff->toString()});
  if (!trimmed.ok()) return trimmed.error();
  return trimmed->integer();
}

redis::Result<TrimReport> Trimmer::trimOnce(redis::Connection& redis) {
  TrimReport report;
  std::optional<redis::Error> failure;
  if (settings_.stream.count() > 0) {
    auto trimmed = trimStream(redis, report);
    if (trimmed.ok()) {
      report.stream_trimmed = *trimmed;
    } else {
      metrics_.countRedisError("trim_stream");
      failure = trimmed.error();
    }
  }
  if (settings_.dlq.count() > 0) {
    auto trimmed = trimDlq(redis);
    if (trimmed.ok()) {
      report.dlq_trimmed = *trimmed;
    } else {
      metrics_.countRedisError("trim_dlq");
      if (!failure) failure = trimmed.error();
    }
  }
  if (report.stream_trimmed > 0) {
    metrics_.countTrimmed("stream", report.stream_trimmed);
    logger_.info("retention trimmed the stream",
                 {{"stream", keys_.stream},
                  {"entries", std::to_string(report.stream_trimmed)},
                  {"below", report.stream_min_id->toString()}});
  }
  if (report.dlq_trimmed > 0) {
    metrics_.countTrimmed("dlq", report.dlq_trimmed);
    logger_.info("retention trimmed the dead-letter queue",
                 {{"dlq", keys_.dlq()}, {"entries", std::to_string(report.dlq_trimmed)}});
  }
  if (failure) return *failure;
  return report;
}

}  // namespace relay::stream
