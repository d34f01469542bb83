#include "history/retention_record.h"

#include "common/duration.h"
#include "common/whole_number.h"
#include "stream/stream_entry.h"

namespace relay::history {
namespace {

// A retention the workers reported, as `REDIS_STREAM_RETENTION=24h`-like text.
std::string retentionText(redis::Connection& redis, const invocation::StreamKeys& keys,
                          const std::string& field) {
  auto reply = redis.command({"HGET", keys.retention(), field});
  if (!reply.ok()) return {};
  auto text = reply->optionalString();
  long long ms = 0;
  if (!text.ok() || !text->has_value() || !parseWholeNumber(**text, ms)) return {};
  return ms == 0 ? "0 (never)" : formatDuration(std::chrono::milliseconds(ms));
}

}  // namespace

redis::Result<std::optional<MissingPart>> missingPart(redis::Connection& redis,
                                                      const invocation::StreamKeys& keys,
                                                      stream::StreamId from, stream::StreamId to,
                                                      std::optional<stream::StreamId> stream_first,
                                                      const std::string& archive,
                                                      const std::string& app) {
  // The oldest entry still held for the window: the archive's first, else the stream's.
  std::optional<stream::StreamId> held = stream_first;
  if (!archive.empty()) {
    auto reply = redis.command({"XRANGE", archive, "-", "+", "COUNT", "1"});
    if (!reply.ok()) return reply.error();
    auto entries = stream::parseEntries(reply->view());
    if (!entries.ok()) return entries.error();
    if (!entries->empty()) held = stream::StreamId::parse(entries->front().id);
  }
  if (held && !(from < *held)) return std::optional<MissingPart>();
  MissingPart part;
  part.from = from.toString();
  const std::optional<stream::StreamId> last = held ? held->previous() : std::nullopt;
  part.to = (!held || to < *held || !last) ? to.toString() : last->toString();
  if (!archive.empty()) {
    const bool own = archive == keys.appArchive(app);
    const std::string retention = retentionText(redis, keys, "archive:" + archive);
    part.reason = std::string("older than the ") + (own ? "app's" : "stream's") + " archive " +
                  archive + " keeps" +
                  (retention.empty() ? "" : " (its retention " + retention + ")");
    return std::optional<MissingPart>(std::move(part));
  }
  const std::string retention = retentionText(redis, keys, "stream");
  auto trimmed = redis.command({"HGET", keys.retention(), "stream_trimmed_to"});
  std::optional<stream::StreamId> trimmed_to;
  if (trimmed.ok()) {
    auto text = trimmed->optionalString();
    if (text.ok() && text->has_value()) trimmed_to = stream::StreamId::parse(**text);
  }
  if (trimmed_to && from < *trimmed_to) {
    part.reason = "trimmed by the stream's retention (REDIS_STREAM_RETENTION=" +
                  (retention.empty() ? std::string("?") : retention) +
                  ") and no archive keeps it (docs/replay.md \"Archive\")";
  } else {
    part.reason =
        "not in the stream: removed outside Relay's retention (XTRIM, XDEL) or never there, and "
        "no archive keeps it";
  }
  return std::optional<MissingPart>(std::move(part));
}

redis::Status recordRetention(redis::Connection& redis, const invocation::StreamKeys& keys,
                              const std::string& field, std::chrono::milliseconds retention) {
  auto reply = redis.command({"HSET", keys.retention(), field, std::to_string(retention.count())});
  if (!reply.ok()) return reply.error();
  return {};
}

redis::Status recordStreamTrim(redis::Connection& redis, const invocation::StreamKeys& keys,
                               stream::StreamId min_id) {
  auto reply = redis.command({"HSET", keys.retention(), "stream_trimmed_to", min_id.toString()});
  if (!reply.ok()) return reply.error();
  return {};
}

redis::Result<std::vector<RecordedArchive>> recordedArchives(redis::Connection& redis,
                                                             const invocation::StreamKeys& keys) {
  auto reply = redis.command({"HGETALL", keys.retention()});
  if (!reply.ok()) return reply.error();
  auto items = reply->view().elements();
  if (!items.ok()) return items.error();
  std::vector<RecordedArchive> archives;
  constexpr std::string_view kPrefix = "archive:";
  for (std::size_t i = 0; i + 1 < items->size(); i += 2) {
    auto field = (*items)[i].string();
    auto value = (*items)[i + 1].string();
    if (!field.ok() || !value.ok() || !field->starts_with(kPrefix)) continue;
    long long ms = 0;
    if (!parseWholeNumber(*value, ms)) continue;
    archives.push_back({std::string(field->substr(kPrefix.size())), std::chrono::milliseconds(ms)});
  }
  return archives;
}

}  // namespace relay::history
