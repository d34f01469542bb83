#include "history/archive_reader.h"

#include <algorithm>

#include "common/whole_number.h"
#include "history/reply_values.h"
#include "history/retention_record.h"

namespace relay::history {
namespace {

std::optional<stream::StreamId> edgeId(redis::Connection& redis, const std::string& key,
                                       bool newest) {
  auto reply = newest ? redis.command({"XREVRANGE", key, "+", "-", "COUNT", "1"})
                      : redis.command({"XRANGE", key, "-", "+", "COUNT", "1"});
  if (!reply.ok()) return std::nullopt;
  auto entries = stream::parseEntries(reply->view());
  if (!entries.ok() || entries->empty()) return std::nullopt;
  return stream::StreamId::parse(entries->front().id);
}

long long numberOr(const std::string& text, long long fallback) {
  long long value = 0;
  return parseWholeNumber(text, value) ? value : fallback;
}

}  // namespace

redis::Result<std::string> archiveFor(redis::Connection& redis, const invocation::StreamKeys& keys,
                                      std::string_view app) {
  std::vector<std::string> candidates;
  if (!app.empty()) candidates.push_back(keys.appArchive(app));
  candidates.push_back(keys.archive());
  for (const std::string& key : candidates) {
    auto reply = redis.command({"HEXISTS", keys.retention(), "archive:" + key});
    if (!reply.ok()) return reply.error();
    if (integerOr(reply->integer(), 0) == 1) return key;
  }
  return std::string();
}

redis::Result<ArchivePage> readArchive(redis::Connection& redis, const invocation::StreamKeys& keys,
                                       std::string_view app, stream::StreamId from,
                                       stream::StreamId to, std::size_t count) {
  ArchivePage page;
  auto archive = archiveFor(redis, keys, app);
  if (!archive.ok()) return archive.error();
  page.archive = std::move(archive).value();
  if (page.archive.empty() || count == 0 || to < from) return page;
  // No reply limits: the archiver copied only entries within MAX_EVENT_BYTES (read with the
  // consumer's limits), and a replay needs them whole; `count` bounds the memory.
  auto reply = redis.command(
      {"XRANGE", page.archive, from.toString(), to.toString(), "COUNT", std::to_string(count)});
  if (!reply.ok()) return reply.error();
  auto entries = stream::parseEntries(reply->view());
  if (!entries.ok()) return entries.error();
  page.entries = std::move(entries).value();
  return page;
}

redis::Result<ArchivesStatus> readArchivesStatus(redis::Connection& redis,
                                                 const invocation::StreamKeys& keys,
                                                 long long now_ms) {
  ArchivesStatus status;
  auto recorded = recordedArchives(redis, keys);
  if (!recorded.ok()) return recorded.error();
  const std::string app_prefix = keys.archive() + ":";
  for (const RecordedArchive& archive : *recorded) {
    ArchiveStatus one;
    one.key = archive.key;
    if (archive.key.starts_with(app_prefix)) one.app = archive.key.substr(app_prefix.size());
    one.retention_ms = archive.retention.count();
    auto length = redis.command({"XLEN", archive.key});
    if (!length.ok()) return length.error();
    one.entries = integerOr(length->integer(), 0);
    one.oldest = edgeId(redis, archive.key, false);
    one.newest = edgeId(redis, archive.key, true);
    status.archives.push_back(std::move(one));
  }
  std::sort(status.archives.begin(), status.archives.end(),
            [](const ArchiveStatus& a, const ArchiveStatus& b) { return a.key < b.key; });

  auto hash = redis.command({"HGETALL", keys.archiver()});
  if (!hash.ok()) return hash.error();
  auto items = hash->view().elements();
  if (!items.ok()) return items.error();
  ArchiverStatus& archiver = status.archiver;
  for (std::size_t i = 0; i + 1 < items->size(); i += 2) {
    const std::string field = textOf((*items)[i].string());
    const std::string value = textOf((*items)[i + 1].string());
    if (field == "owner") archiver.owner = value;
    if (field == "cursor") archiver.cursor = value;
    if (field == "archived") archiver.archived = numberOr(value, 0);
    if (field == "gaps") archiver.gaps = numberOr(value, 0);
    if (field == "lost") archiver.lost = numberOr(value, 0);
    if (field == "last_gap_from") archiver.last_gap_from = value;
    if (field == "last_gap_to") archiver.last_gap_to = value;
  }
  if (!archiver.cursor.empty()) {
    auto next = redis.command({"XRANGE", keys.stream, "(" + archiver.cursor, "+", "COUNT", "1"});
    if (!next.ok()) return next.error();
    auto entries = stream::parseEntries(next->view());
    if (!entries.ok()) return entries.error();
    if (!entries->empty()) {
      if (auto id = stream::StreamId::parse(entries->front().id)) {
        archiver.lag_ms = std::max(0LL, now_ms - static_cast<long long>(id->ms));
      }
    }
  }
  return status;
}

}  // namespace relay::history
