#include "history/replay_driver.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "catalog/replay_copy.h"
#include "common/duration.h"
#include "common/whole_number.h"
#include "dlq/dlq_filter.h"
#include "dlq/entry.h"
#include "history/archive_reader.h"
#include "history/replay_selection.h"
#include "history/retention_record.h"
#include "redis/reconnect.h"
#include "stream/stream_entry.h"
#include "stream/stream_id.h"

namespace relay::history {
namespace {

using catalog::ReplayCopy;

// KEYS: replay. ARGV: driver, lease-ms. Takes the lease of a running replay when it is free,
// expired or this driver's: 1, else 0.
constexpr const char* kTake = R"LUA(
local state, driver, held = unpack(redis.call('HMGET', KEYS[1], 'state', 'driver', 'lease_until'))
if state ~= 'running' then return 0 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if driver and driver ~= '' and driver ~= ARGV[1] and tonumber(held or '0') > now then return 0 end
redis.call('HSET', KEYS[1], 'driver', ARGV[1], 'lease_until', now + tonumber(ARGV[2]))
return 1
)LUA";

// KEYS: replay, copies, stream, dlq. ARGV: driver, lease-ms, cursor, scanned, skipped, copies,
// then per copy: its key in the copies hash (the original's id, a dead letter's id), 1 when
// that dead-letter entry leaves the DLQ with the copy's publication, its field count and its
// fields. Publishes each copy once per replay and key, moves the cursor, counts, renews the
// lease; nothing once the replay was cancelled or another driver took it.
constexpr const char* kPublish = R"LUA(
local replay, copies, stream, dlq = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local me, lease, cursor = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local state, driver = unpack(redis.call('HMGET', replay, 'state', 'driver'))
if state ~= 'running' then return {'stopped', 0, 0} end
if driver ~= me then return {'lost', 0, 0} end
local published, duplicates, i = 0, 0, 7
for _ = 1, tonumber(ARGV[6]) do
  local key, xdel, count = ARGV[i], ARGV[i + 1], tonumber(ARGV[i + 2])
  local fields = {}
  for j = i + 3, i + 2 + count do fields[#fields + 1] = ARGV[j] end
  i = i + 3 + count
  if redis.call('HSETNX', copies, key, '-') == 1 then
    redis.call('HSET', copies, key, redis.call('XADD', stream, '*', unpack(fields)))
    if xdel == '1' then redis.call('XDEL', dlq, key) end
    published = published + 1
  else
    duplicates = duplicates + 1
  end
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('HSET', replay, 'cursor', cursor, 'lease_until', now + lease)
redis.call('HINCRBY', replay, 'scanned', tonumber(ARGV[4]))
redis.call('HINCRBY', replay, 'skipped', tonumber(ARGV[5]))
redis.call('HINCRBY', replay, 'published', published)
redis.call('HINCRBY', replay, 'duplicates', duplicates)
return {'ok', published, duplicates}
)LUA";

// KEYS: replay, copies. ARGV: driver, state, error, ttl-ms. Ends a running replay this driver
// holds; both keys then expire with the record's retention.
constexpr const char* kFinish = R"LUA(
local state, driver = unpack(redis.call('HMGET', KEYS[1], 'state', 'driver'))
if state ~= 'running' or driver ~= ARGV[1] then return 0 end
local t = redis.call('TIME')
redis.call('HSET', KEYS[1], 'state', ARGV[2], 'error', ARGV[3], 'lease_until', 0,
           'finished_ms', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
redis.call('PEXPIRE', KEYS[1], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return 1
)LUA";

redis::Error unexpected(std::string message) {
  return {redis::ErrorKind::kProtocol, std::move(message)};
}

// The first entry id of `key`, or nullopt when it is empty or missing.
redis::Result<std::optional<stream::StreamId>> firstId(redis::Connection& redis,
                                                       const std::string& key) {
  auto reply = redis.command({"XRANGE", key, "-", "+", "COUNT", "1"});
  if (!reply.ok()) return reply.error();
  auto entries = stream::parseEntries(reply->view());
  if (!entries.ok()) return entries.error();
  if (entries->empty()) return std::optional<stream::StreamId>();
  return stream::StreamId::parse(entries->front().id);
}

// `limits`: how source entries are read (cut like the worker reads them: a huge one is
// oversized, never copied, never held whole; docs/operations.md "Memory").
redis::Result<std::vector<stream::StreamEntry>> range(redis::Connection& redis,
                                                      const std::string& key,
                                                      const std::string& start,
                                                      const std::string& end, std::size_t count,
                                                      const redis::ReplyLimits& limits = {}) {
  auto reply = redis.command({"XRANGE", key, start, end, "COUNT", std::to_string(count)}, limits);
  if (!reply.ok()) return reply.error();
  return stream::parseEntries(reply->view());
}

}  // namespace

struct ReplayDriver::Page {
  struct Copy {
    std::string key;
    bool leaves_dlq = false;
    std::vector<std::string> fields;
  };
  std::string cursor;
  long long scanned = 0;
  long long skipped = 0;
  std::vector<Copy> copies;
};

ReplayDriver::ReplayDriver(ReplayDriverSettings settings, redis::Endpoint endpoint,
                           const app::Registry& registry, observability::Metrics& metrics,
                           observability::Logger& logger, Clock& clock)
    : settings_(std::move(settings)),
      endpoint_(std::move(endpoint)),
      registry_(registry),
      metrics_(metrics),
      logger_(logger),
      clock_(clock),
      take_(kTake),
      publish_(kPublish),
      finish_(kFinish) {}

void ReplayDriver::stop() { stopping_.request(); }

void ReplayDriver::run() {
  std::unique_ptr<redis::Connection> redis;
  redis::Backoff backoff(settings_.reconnect_min, settings_.reconnect_max);
  while (!stopping_.requested()) {
    if (auto connected = redis::reconnect(redis, endpoint_); !connected.ok()) {
      stopping_.sleepFor(clock_, backoff.next());
      continue;
    }
    auto drove = driveOnce(*redis);
    if (!drove.ok()) {
      metrics_.countRedisError("replay");
      logger_.warn("driving a replay failed: retried", {{"error", drove.error().message}});
      stopping_.sleepFor(clock_, backoff.next());
      continue;
    }
    backoff.reset();
    if (!*drove) stopping_.sleepFor(clock_, settings_.poll);
  }
}

redis::Result<std::optional<DriveReport>> ReplayDriver::driveOnce(redis::Connection& redis) {
  auto replays = listReplays(redis, settings_.keys);
  if (!replays.ok()) return replays.error();
  // Oldest first: replays queue behind each other on a worker, and spread over the workers.
  for (auto it = replays->rbegin(); it != replays->rend(); ++it) {
    if (stopping_.requested()) break;
    if (it->state != "running") continue;
    auto taken = redis.eval(take_, {settings_.keys.replay(it->id)},
                            {settings_.consumer, std::to_string(settings_.lease.count())});
    if (!taken.ok()) return taken.error();
    if (!taken->integer().ok() || *taken->integer() != 1) continue;
    // Read again under the lease: the cursor is where the last driver left it.
    auto current = readReplay(redis, settings_.keys, it->id);
    if (!current.ok()) return current.error();
    if (!*current) continue;
    auto report = drive(redis, **current);
    if (!report.ok()) return report.error();
    return std::optional<DriveReport>(std::move(report).value());
  }
  return std::optional<DriveReport>();
}

redis::Result<DriveReport> ReplayDriver::drive(redis::Connection& redis,
                                               const ReplayStatus& replay) {
  logger_.info(replay.cursor.empty() ? "replay started" : "replay resumed",
               {{"replay", replay.id}, {"app", replay.spec.app}, {"cursor", replay.cursor}});
  auto report = replay.spec.source == ReplaySpec::Source::kDeadLetters
                    ? driveDeadLetters(redis, replay)
                    : driveStream(redis, replay);
  if (!report.ok()) return report;
  metrics_.countReplayCopies(report->published);
  if (report->ended == "stopping") {
    // Given back at once, so another worker resumes without waiting for the lease.
    (void)redis.command({"HSET", settings_.keys.replay(replay.id), "lease_until", "0"});
  }
  logger_.info("replay " + report->ended,
               {{"replay", replay.id}, {"published", std::to_string(report->published)}});
  return report;
}

redis::Result<bool> ReplayDriver::publish(redis::Connection& redis, const ReplayStatus& replay,
                                          const Page& page, DriveReport& report) {
  std::vector<std::string> args = {settings_.consumer,
                                   std::to_string(settings_.lease.count()),
                                   page.cursor,
                                   std::to_string(page.scanned),
                                   std::to_string(page.skipped),
                                   std::to_string(page.copies.size())};
  for (const Page::Copy& copy : page.copies) {
    args.push_back(copy.key);
    args.push_back(copy.leaves_dlq ? "1" : "0");
    args.push_back(std::to_string(copy.fields.size()));
    args.insert(args.end(), copy.fields.begin(), copy.fields.end());
  }
  auto reply = redis.eval(publish_,
                          {settings_.keys.replay(replay.id), settings_.keys.replayCopies(replay.id),
                           settings_.keys.stream, settings_.keys.dlq()},
                          args);
  if (!reply.ok()) return reply.error();
  auto verdict = reply->at(0);
  auto published = reply->at(1);
  if (!verdict.ok() || !verdict->string().ok() || !published.ok() || !published->integer().ok()) {
    return unexpected("replay publication: unexpected reply");
  }
  report.published += *published->integer();
  const std::string_view said = *verdict->string();
  if (said == "ok") return true;
  report.ended = said == "stopped" ? "cancelled" : "lost";
  return false;
}

redis::Result<bool> ReplayDriver::finish(redis::Connection& redis, const std::string& id,
                                         const std::string& state, const std::string& error) {
  auto reply =
      redis.eval(finish_, {settings_.keys.replay(id), settings_.keys.replayCopies(id)},
                 {settings_.consumer, state, error, std::to_string(settings_.record_ttl.count())});
  if (!reply.ok()) return reply.error();
  return reply->integer().ok() && *reply->integer() == 1;
}

bool ReplayDriver::waitForRate(const ReplayPace& pace, std::size_t copies) {
  if (const std::optional<MonoTime> at = pace.earliest(copies)) {
    const MonoTime now = clock_.monotonicNow();
    if (*at > now) stopping_.sleepFor(clock_, *at - now);
  }
  return !stopping_.requested();
}

redis::Result<std::string> ReplayDriver::archiveOf(redis::Connection& redis,
                                                   const std::string& app) {
  return archiveFor(redis, settings_.keys, app);  // docs/replay.md "Archive"
}

redis::Result<DriveReport> ReplayDriver::driveStream(redis::Connection& redis,
                                                     const ReplayStatus& replay) {
  DriveReport report{replay.id, "done", 0};
  const ReplaySpec& spec = replay.spec;
  const auto fail = [&](const std::string& why) -> redis::Result<DriveReport> {
    auto ended = finish(redis, replay.id, "failed", why);
    if (!ended.ok()) return ended.error();
    report.ended = "failed";
    logger_.warn("replay failed", {{"replay", replay.id}, {"error", why}});
    return report;
  };
  auto selection = ReplaySelection::create(registry_.snapshot(), spec, settings_.max_event_bytes);
  if (!selection.ok()) return fail(selection.error().message + " on " + settings_.consumer);
  const auto from = stream::StreamId::parse(spec.from);
  const auto to = stream::StreamId::parse(spec.to);
  if (!from || !to) return fail("window " + spec.from + ".." + spec.to + " is not two ids");

  // Where the window's entries are: the stream holds what it has not trimmed; an archive of
  // the app (or of the stream) what is older; the rest is reported missing.
  auto stream_first = firstId(redis, settings_.keys.stream);
  if (!stream_first.ok()) return stream_first.error();
  auto archived = archiveOf(redis, spec.app);
  if (!archived.ok()) return archived.error();
  const std::string archive = std::move(archived).value();
  if (replay.cursor.empty()) {
    auto missing = missingOfWindow(redis, settings_.keys, spec.from, spec.to, archive, spec.app,
                                   settings_.stream_retention);
    if (!missing.ok()) return missing.error();
    if (missing->has_value()) {
      const MissingPart& part = **missing;
      auto recorded =
          redis.command({"HSET", settings_.keys.replay(replay.id), "missing_from", part.from,
                         "missing_to", part.to, "missing_reason", part.reason});
      if (!recorded.ok()) return recorded.error();
      logger_.warn(
          "replay: part of the window is gone",
          {{"replay", replay.id}, {"from", part.from}, {"to", part.to}, {"reason", part.reason}});
    }
  }

  std::string cursor = replay.cursor;
  ReplayPace pace(spec.rate);
  const std::size_t page_size = pace.pageSize(settings_.page);
  while (true) {
    if (stopping_.requested()) {
      report.ended = "stopping";
      return report;
    }
    const std::string start = cursor.empty() ? spec.from : "(" + cursor;
    // The archive serves what precedes the stream's first entry.
    const std::optional<stream::StreamId> next =
        cursor.empty() ? from : stream::StreamId::parse(cursor)->next();
    const bool from_archive =
        !archive.empty() && next && (!*stream_first || *next < **stream_first);
    std::vector<stream::StreamEntry> entries;
    bool last_page = false;
    if (from_archive) {
      const std::string end =
          *stream_first && **stream_first <= *to ? "(" + (*stream_first)->toString() : spec.to;
      auto got = range(redis, archive, start, end, page_size,
                       stream::entryReplyLimits(settings_.max_event_bytes));
      if (!got.ok()) return got.error();
      entries = std::move(got).value();
      if (entries.size() < page_size) {
        // The archive is read up to the stream: go on there (or stop at the window's end).
        if (!*stream_first || *to < **stream_first) {
          last_page = true;
        } else if (entries.empty()) {
          // Jump just below the stream's first entry.
          const stream::StreamId first = **stream_first;
          cursor = first.seq > 0  ? stream::StreamId{first.ms, first.seq - 1}.toString()
                   : first.ms > 0 ? stream::StreamId{first.ms - 1, UINT64_MAX}.toString()
                                  : "0-0";
          continue;
        }
      }
    } else {
      auto got = range(redis, settings_.keys.stream, start, spec.to, page_size,
                       stream::entryReplyLimits(settings_.max_event_bytes));
      if (!got.ok()) return got.error();
      entries = std::move(got).value();
      last_page = entries.size() < page_size;
    }
    Page page;
    page.cursor = entries.empty() ? cursor : entries.back().id;
    for (const stream::StreamEntry& original : entries) {
      ++page.scanned;
      if (!selection->selects(original)) {
        ++page.skipped;
        continue;
      }
      ReplayCopy copy;
      copy.replay = replay.id;
      copy.group = settings_.keys.group;
      copy.original_id = original.id;
      copy.app = spec.app;
      copy.handler = spec.handler;
      Page::Copy out{original.id,
                     false,
                     {"event", std::string(original.valueOf("event")),
                      std::string(catalog::kReplayField), copy.envelope()}};
      for (const char* trace : {"traceparent", "tracestate"}) {
        if (const std::string* value = original.find(trace)) {
          out.fields.push_back(trace);
          out.fields.push_back(*value);
        }
      }
      page.copies.push_back(std::move(out));
    }
    if (!page.cursor.empty()) {
      if (!waitForRate(pace, page.copies.size())) {
        report.ended = "stopping";
        return report;
      }
      auto verdict = publish(redis, replay, page, report);
      if (!verdict.ok()) return verdict.error();
      if (!*verdict) return report;
      pace.published(page.copies.size(), clock_.monotonicNow());
      cursor = page.cursor;
    }
    if (last_page) break;
  }
  auto ended = finish(redis, replay.id, "done", "");
  if (!ended.ok()) return ended.error();
  if (!*ended) report.ended = "cancelled";
  return report;
}

redis::Result<DriveReport> ReplayDriver::driveDeadLetters(redis::Connection& redis,
                                                          const ReplayStatus& replay) {
  DriveReport report{replay.id, "done", 0};
  const ReplaySpec& spec = replay.spec;
  auto filter = dlq::DlqFilter::fromJson(spec.dlq_filter);
  if (!filter.ok()) {
    auto ended = finish(redis, replay.id, "failed", filter.error().message);
    if (!ended.ok()) return ended.error();
    report.ended = "failed";
    return report;
  }
  std::string cursor = replay.cursor;
  ReplayPace pace(spec.rate);
  const std::size_t page_size = pace.pageSize(settings_.page);
  while (true) {
    if (stopping_.requested()) {
      report.ended = "stopping";
      return report;
    }
    auto entries =
        range(redis, settings_.keys.dlq(), cursor.empty() ? filter->oldestBound() : "(" + cursor,
              spec.upto, page_size);
    if (!entries.ok()) return entries.error();
    Page page;
    page.cursor = entries->empty() ? cursor : entries->back().id;
    for (stream::StreamEntry& record : *entries) {
      const dlq::Entry entry = dlq::Entry::from(std::move(record));
      if (!filter->matches(entry)) continue;  // not selected: not counted
      ++page.scanned;
      if (entry.refusal()) {
        ++page.skipped;  // never reached a handler: it stays (`relay dlq inspect` says why)
        continue;
      }
      ReplayCopy copy;
      copy.replay = replay.id;
      copy.group = settings_.keys.group;
      copy.original_id = std::string(entry.originalId());
      copy.app = std::string(entry.app());
      copy.handler = std::string(entry.handler());
      copy.mode = ReplayCopy::Mode::kDeadLetter;
      copy.dlq_id = entry.id();
      if (!stream::StreamId::parse(copy.original_id)) copy.original_id = entry.id();
      page.copies.push_back({entry.id(),
                             true,
                             {"event", std::string(entry.event()),
                              std::string(catalog::kReplayField), copy.envelope()}});
    }
    if (!page.cursor.empty()) {
      if (!waitForRate(pace, page.copies.size())) {
        report.ended = "stopping";
        return report;
      }
      auto verdict = publish(redis, replay, page, report);
      if (!verdict.ok()) return verdict.error();
      if (!*verdict) return report;
      pace.published(page.copies.size(), clock_.monotonicNow());
      cursor = page.cursor;
    }
    if (entries->size() < page_size) break;
  }
  auto ended = finish(redis, replay.id, "done", "");
  if (!ended.ok()) return ended.error();
  if (!*ended) report.ended = "cancelled";
  return report;
}

}  // namespace relay::history
