#include "history/archiver.h"

#include <map>
#include <utility>
#include <vector>

#include "catalog/message_decoder.h"
#include "catalog/replay_copy.h"
#include "common/duration.h"
#include "common/rfc3339.h"
#include "common/whole_number.h"
#include "history/reply_values.h"
#include "history/retention_record.h"
#include "pattern/evaluator.h"
#include "redis/script.h"
#include "schedule/occurrence.h"
#include "stream/retention.h"
#include "stream/stream_entry.h"

namespace relay::history {
namespace {

// KEYS: archiver hash, stream. ARGV: owner, lease ms, count. Takes or renews the lease (on
// Redis time), then reads, in one atomic step, the stream's counts (XINFO STREAM: entries ever
// added, length, first entry, last id; Redis 7) and the batch past the cursor. `seen` counts the
// stream entries the archiver has accounted for, all of them at or below the cursor; when the
// first entry still held is past the cursor, every entry removed beyond `seen` was removed
// unread: a gap (docs/replay.md "Gaps"). The first pass starts at 0-0 with what the stream
// already lost accounted for: history from before the archiver is no gap.
constexpr const char* kReadBatch = R"LUA(
local hash, stream = KEYS[1], KEYS[2]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local owner = redis.call('HGET', hash, 'owner')
local lease_until = tonumber(redis.call('HGET', hash, 'lease_until') or '0')
if owner and owner ~= ARGV[1] and lease_until > now then return {0, owner} end
if owner ~= ARGV[1] then redis.call('HSET', hash, 'owner', ARGV[1], 'leader_since', now) end
redis.call('HSET', hash, 'lease_until', now + tonumber(ARGV[2]))
local added, length, first, last = '', 0, '', ''
if redis.call('EXISTS', stream) == 1 then
  local info = redis.call('XINFO', 'STREAM', stream)
  for i = 1, #info, 2 do
    local name, value = info[i], info[i + 1]
    if name == 'entries-added' then added = tostring(value)
    elseif name == 'length' then length = value
    elseif name == 'last-generated-id' then last = value
    elseif name == 'first-entry' and type(value) == 'table' then first = value[1] end
  end
end
local cursor = redis.call('HGET', hash, 'cursor')
if not cursor then
  cursor = '0-0'
  local seen = 0
  if added ~= '' then seen = tonumber(added) - length end
  redis.call('HSET', hash, 'cursor', cursor, 'seen', seen, 'started_ms', now)
end
local seen = redis.call('HGET', hash, 'seen') or '0'
local entries = redis.call('XRANGE', stream, '(' .. cursor, '+', 'COUNT', ARGV[3])
return {1, cursor, added, tostring(length), first, last, seen, entries}
)LUA";

// KEYS: archiver hash. ARGV: owner, the cursor read, the new cursor, lease ms, copies written,
// gap from, gap to ("" none), entries lost, the new `seen`. Moves the cursor only for the lease
// holder that read it.
constexpr const char* kCommit = R"LUA(
local hash = KEYS[1]
if redis.call('HGET', hash, 'owner') ~= ARGV[1] then return 0 end
if redis.call('HGET', hash, 'cursor') ~= ARGV[2] then return 0 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('HSET', hash, 'cursor', ARGV[3], 'lease_until', now + tonumber(ARGV[4]),
  'pass_ms', now, 'seen', ARGV[9])
if ARGV[5] ~= '0' then redis.call('HINCRBY', hash, 'archived', ARGV[5]) end
if ARGV[6] ~= '' then
  redis.call('HINCRBY', hash, 'gaps', 1)
  redis.call('HINCRBY', hash, 'lost', ARGV[8])
  redis.call('HSET', hash, 'last_gap_from', ARGV[6], 'last_gap_to', ARGV[7], 'last_gap_ms', now)
end
return 1
)LUA";

// KEYS: archiver hash. ARGV: owner. Ends the lease early (a graceful stop).
constexpr const char* kRelease = R"LUA(
if redis.call('HGET', KEYS[1], 'owner') == ARGV[1] then
  redis.call('HSET', KEYS[1], 'lease_until', 0)
end
return 1
)LUA";

const redis::Script& readScript() {
  static const redis::Script script(kReadBatch);
  return script;
}
const redis::Script& commitScript() {
  static const redis::Script script(kCommit);
  return script;
}
const redis::Script& releaseScript() {
  static const redis::Script script(kRelease);
  return script;
}

redis::Error protocolError(std::string message) {
  return {redis::ErrorKind::kProtocol, std::move(message)};
}

// An XADD refused because the archive already holds this id (or a later one): the copy a
// previous holder of the lease wrote before it died.
bool alreadyArchived(const redis::Error& error) {
  return error.message.find("equal or smaller than the target stream top item") !=
         std::string::npos;
}

Instant publicationOf(const stream::StreamId& id) {
  return Instant{static_cast<std::int64_t>(id.ms / 1000),
                 static_cast<std::int32_t>((id.ms % 1000) * 1'000'000)};
}

}  // namespace

/// One archive and what it keeps.
struct Archiver::Target {
  std::string key;
  std::chrono::milliseconds retention{0};
  std::shared_ptr<const pattern::Pattern> pattern;  // null with no rules: everything
  std::shared_ptr<const app::App> app;              // an app's archive without a pattern
};

Archiver::Archiver(invocation::StreamKeys keys, std::string owner,
                   std::optional<StreamArchive> stream_archive, SnapshotSource snapshot,
                   ArchiverSettings settings, observability::Metrics& metrics,
                   observability::Logger& logger, Clock& clock)
    : keys_(std::move(keys)),
      owner_(std::move(owner)),
      stream_archive_(std::move(stream_archive)),
      snapshot_(std::move(snapshot)),
      settings_(settings),
      metrics_(metrics),
      logger_(logger),
      clock_(clock) {}

std::vector<Archiver::Target> Archiver::targets() const {
  std::vector<Target> targets;
  if (stream_archive_ && stream_archive_->retention.count() > 0) {
    targets.push_back({keys_.archive(), stream_archive_->retention, stream_archive_->pattern, {}});
  }
  const auto snapshot = snapshot_ ? snapshot_() : nullptr;
  if (!snapshot) return targets;
  for (const app::AppEntry& entry : snapshot->apps()) {
    if (!entry.app || !entry.app->archive) continue;
    const app::Archive& archive = *entry.app->archive;
    targets.push_back({keys_.appArchive(entry.name), archive.retention, archive.pattern,
                       archive.pattern ? nullptr : entry.app});
  }
  return targets;
}

namespace {

// Whether `target` keeps `entry` (whose event is decoded once, lazily, into `event`).
bool keeps(const std::shared_ptr<const pattern::Pattern>& pattern, const app::App* app,
           const std::optional<event::Event>& event, Instant published) {
  if (!pattern && !app) return true;  // a stream archive without a pattern: every entry
  if (!event) return false;
  if (pattern) return pattern::matches(*pattern, *event, published);
  for (const app::Rule& rule : app->rules) {
    if (rule.pattern && pattern::matches(*rule.pattern, *event, published)) return true;
  }
  return false;
}

}  // namespace

redis::Result<ArchivePass> Archiver::passOnce(redis::Connection& redis) {
  ArchivePass pass;
  const std::vector<Target> archives = targets();
  if (archives.empty()) return pass;
  const std::string lease = std::to_string(settings_.lease.count());
  const redis::ReplyLimits limits = stream::entryReplyLimits(settings_.max_event_bytes);
  const MonoTime until = clock_.monotonicNow() + settings_.pass_budget;
  for (std::size_t batch = 0; batch < settings_.batches_per_pass; ++batch) {
    if (batch > 0 && clock_.monotonicNow() >= until) break;
    // Read as the consumer reads (docs/operations.md "Memory"): a hostile entry is never
    // pulled whole.
    auto reply = redis.eval(readScript(), {keys_.archiver(), keys_.stream},
                            {owner_, lease, std::to_string(settings_.batch)}, &limits);
    if (!reply.ok()) return reply.error();
    auto taken = reply->view().at(0);
    if (!taken.ok()) return taken.error();
    if (integerOr(taken->integer(), 0) != 1) {
      metrics_.setArchiveLag(0);  // another worker archives, and reports the lag
      return pass;
    }
    pass.leader = true;
    std::vector<std::string> texts;
    for (std::size_t i = 1; i <= 6; ++i) {
      auto item = reply->view().at(i);
      if (!item.ok()) return protocolError("the archiver's read script: an unexpected reply");
      texts.push_back(textOf(item->string()));
    }
    auto entries_reply = reply->view().at(7);
    if (!entries_reply.ok()) return entries_reply.error();
    const std::string& cursor = texts[0];
    const auto cursor_id = stream::StreamId::parse(cursor);
    if (!cursor_id) return protocolError("the archiver's cursor is not a stream id: " + cursor);
    auto entries = stream::parseEntries(*entries_reply);
    if (!entries.ok()) return entries.error();
    pass.read += entries->size();

    // Entries removed past the cursor before they were read: lost to replay. Known only when
    // the stream reports how many entries it ever took (Redis 7).
    long long added = 0, length = 0, seen = 0;
    const bool counted = parseWholeNumber(texts[1], added) && parseWholeNumber(texts[2], length) &&
                         parseWholeNumber(texts[5], seen);
    const auto first = stream::StreamId::parse(texts[3]);
    const bool past_cursor = !first || *cursor_id < *first;
    std::string gap_from, gap_to;
    long long lost = 0;
    if (counted && past_cursor && added - length > seen) {
      lost = added - length - seen;
      gap_from = cursor;
      gap_to = texts[4];  // the stream's last id when it is empty
      if (!entries->empty()) {
        if (auto front = stream::StreamId::parse(entries->front().id)) {
          if (auto before = front->previous()) gap_to = before->toString();
        }
      }
    }
    const long long next_seen =
        (counted && past_cursor ? added - length : seen) + static_cast<long long>(entries->size());
    stream::StreamId next_cursor = *cursor_id;

    // The copies, one pipeline: each entry into every archive that keeps it, in id order.
    std::vector<std::vector<std::string>> commands;
    std::vector<const Target*> written;
    for (const stream::StreamEntry& entry : *entries) {
      const auto id = stream::StreamId::parse(entry.id);
      if (!id) return protocolError("the stream returned an entry id that is not one: " + entry.id);
      if (next_cursor < *id) next_cursor = *id;
      if (entry.deleted) continue;
      // Never archived: replay copies (history already) and schedule occurrences (Relay's own
      // publications, which a backfill publishes again: docs/schedules.md).
      if (entry.find(catalog::kReplayField) || entry.find(schedule::kEnvelopeField)) continue;
      // Larger than the read keeps: it never runs (the pipeline dead-letters it as oversized)
      // and would never run in a replay either; a cut copy would be a lie.
      if (!entry.cut.empty() || entry.items_when_dropped > 0) {
        logger_.warn("an entry too large to archive was left out",
                     {{"stream", keys_.stream}, {"id", entry.id}, {"why", "over MAX_EVENT_BYTES"}});
        continue;
      }
      std::optional<event::Event> event;
      bool decoded = false;
      for (const Target& target : archives) {
        if (target.pattern || target.app) {
          if (!decoded) {
            decoded = true;
            if (const std::string* raw = entry.find("event")) {
              auto checked = catalog::checkEventValue(*raw, settings_.max_event_bytes);
              if (checked.ok()) event = std::move(checked).value();
            }
          }
        }
        if (!keeps(target.pattern, target.app.get(), event, publicationOf(*id))) continue;
        std::vector<std::string> command = {"XADD", target.key, entry.id};
        for (const auto& [field, value] : entry.fields) {
          command.push_back(field);
          command.push_back(value);
        }
        commands.push_back(std::move(command));
        written.push_back(&target);
      }
    }
    std::size_t copies = 0;
    std::map<std::string, long long> per_archive;
    if (!commands.empty()) {
      auto replies = redis.pipeline(commands);
      if (!replies.ok()) return replies.error();
      for (std::size_t i = 0; i < replies->size(); ++i) {
        const auto& result = (*replies)[i];
        if (!result.ok()) {
          if (alreadyArchived(result.error())) continue;
          return result.error();
        }
        ++copies;
        ++per_archive[written[i]->key];
      }
    }
    for (const auto& [key, count] : per_archive) metrics_.countArchived(key, count);
    if (entries->empty() && gap_from.empty()) {
      pass.caught_up = true;  // nothing new: the read renewed the lease, the cursor stays
      break;
    }
    auto committed =
        redis.eval(commitScript(), {keys_.archiver()},
                   {owner_, cursor, next_cursor.toString(), lease, std::to_string(copies), gap_from,
                    gap_to, std::to_string(lost), std::to_string(next_seen)});
    if (!committed.ok()) return committed.error();
    if (integerOr(committed->integer(), 0) != 1) {
      // Another worker took the lease over meanwhile: it repeats this batch, harmlessly.
      pass.leader = false;
      return pass;
    }
    pass.archived += copies;
    pass.cursor = next_cursor.toString();
    if (!gap_from.empty()) {
      ++pass.gaps;
      metrics_.countArchiveGap();
      logger_.warn("the stream was trimmed past the archiver: entries lost to replay",
                   {{"stream", keys_.stream},
                    {"entries", std::to_string(lost)},
                    {"after", gap_from},
                    {"up_to", gap_to},
                    {"why",
                     "trimmed (REDIS_STREAM_RETENTION, MAXLEN or XTRIM) before they were "
                     "archived; see docs/replay.md \"Archive\""}});
    }
    if (entries->size() < settings_.batch) {
      pass.caught_up = true;
      break;
    }
  }
  if (pass.leader) {
    // The lag: how old the first entry still unread is (0 when the pass caught up).
    double lag = 0;
    if (!pass.caught_up && !pass.cursor.empty()) {
      auto next = redis.command({"XRANGE", keys_.stream, "(" + pass.cursor, "+", "COUNT", "1"});
      if (next.ok()) {
        auto entries = stream::parseEntries(next->view());
        if (entries.ok() && !entries->empty()) {
          if (auto id = stream::StreamId::parse(entries->front().id)) {
            const auto age = unixMillis(clock_.now()) - static_cast<std::int64_t>(id->ms);
            lag = age > 0 ? static_cast<double>(age) / 1000.0 : 0.0;
          }
        }
      }
    }
    metrics_.setArchiveLag(lag);
    const MonoTime now = clock_.monotonicNow();
    if (!next_trim_ || now >= *next_trim_) {
      next_trim_ = now + settings_.trim_interval;
      auto trimmed = trimOnce(redis);
      if (!trimmed.ok()) return trimmed.error();
      pass.trimmed = *trimmed;
    }
  }
  return pass;
}

redis::Result<long long> Archiver::trimOnce(redis::Connection& redis) {
  for (const Target& target : targets()) {
    auto recorded = recordRetention(redis, keys_, "archive:" + target.key, target.retention);
    if (!recorded.ok()) return recorded.error();
  }
  auto recorded = recordedArchives(redis, keys_);
  if (!recorded.ok()) return recorded.error();
  long long total = 0;
  for (const RecordedArchive& archive : *recorded) {
    const auto cutoff = stream::ageTrimId(clock_.now(), archive.retention);
    if (!cutoff) continue;
    auto trimmed = redis.command({"XTRIM", archive.key, "MINID", "=", cutoff->toString()});
    if (!trimmed.ok()) return trimmed.error();
    const long long removed = integerOr(trimmed->integer(), 0);
    if (removed > 0) {
      metrics_.countTrimmed("archive", removed);
      logger_.info("retention trimmed an archive",
                   {{"archive", archive.key},
                    {"entries", std::to_string(removed)},
                    {"retention", formatDuration(archive.retention)}});
    }
    total += removed;
  }
  return total;
}

void Archiver::release(redis::Connection& redis) {
  (void)redis.eval(releaseScript(), {keys_.archiver()}, {owner_});
}

}  // namespace relay::history
