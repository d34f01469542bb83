#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "history/retention_record.h"
#include "invocation/keys.h"
#include "invocation/lifecycle_store.h"
#include "redis/connection.h"

namespace relay::history {

/// How long a finished replay's record (and its copies hash) is kept: the `--again` check and
/// `relay replay ls` see it that long (docs/replay.md "State in Redis").
inline constexpr std::chrono::milliseconds kReplayRecordTtl = std::chrono::hours(24 * 30);

/// What a replay replays (docs/replay.md): history of the stream (or its archive) through the
/// rules of one app, or dead-letter entries through their recorded handlers. Fixed when the
/// replay is created.
struct ReplaySpec {
  enum class Source { kStream, kDeadLetters };
  Source source = Source::kStream;
  std::string app;      // kStream: the app whose rules judge the entries
  std::string handler;  // kStream: only this rule's ("" every rule of the app)
  std::string from;     // kStream: the first and last entry ids of the window, inclusive
  std::string to;
  std::string filter;      // kStream: a pattern's text (YAML) the entries must also match
  std::string dlq_filter;  // kDeadLetters: dlq::DlqFilter::toJson()
  std::string upto;        // kDeadLetters: the newest entry the selection considered
  long long expected = 0;  // kDeadLetters: the count the operator confirmed
  double rate = 0;         // copies published per second at most (0: as fast as possible)
  bool again = false;      // --again: a window replayed before may be replayed again
};

/// One replay as its hash holds it: the spec, the driver's cursor and progress.
struct ReplayStatus {
  std::string id;
  ReplaySpec spec;
  std::string state;  // running | done | cancelled | failed
  std::string error;  // failed: why
  std::int64_t created_ms = 0;
  std::int64_t finished_ms = 0;
  std::string cursor;        // the last source entry dealt with ("" none yet)
  long long scanned = 0;     // source entries read
  long long published = 0;   // copies published
  long long skipped = 0;     // entries not replayed (no rule matched, the filter, Relay's own)
  long long duplicates = 0;  // copies a previous driver had published already
  std::string missing_from;  // a part of the window no longer held anywhere, and why
  std::string missing_to;
  std::string missing_reason;
  std::string driver;  // the worker driving it
  std::int64_t lease_until = 0;

  /// How far the cursor is through the window (0..1), by the time in the ids.
  double progress() const;
  bool finished() const { return state != "running"; }
};

/// `relay:<stream>:replay:<group>:<id>` field/value pairs of a new replay, and the status read
/// back from HGETALL pairs.
std::vector<std::string> replayFields(const std::string& id, const ReplaySpec& spec,
                                      std::int64_t created_ms);
ReplayStatus replayStatusOf(std::string id, const std::map<std::string, std::string>& fields);

/// Why a replay cannot be created as asked.
struct ReplayConflict {
  std::string id;  // the earlier replay whose window overlaps
  std::string from, to;
};

/// Creates a replay (state running; a worker's ReplayDriver takes it up within a second).
/// Refused, with the earlier replay named, when `spec` replays a stream window of the same app
/// and rules that an earlier replay already covered, unless spec.again (docs/replay.md
/// "Replaying again"). The check and the creation are one transaction (WATCH).
struct CreatedReplay {
  std::string id;
  std::optional<ReplayConflict> conflict;  // set: nothing was created
};
redis::Result<CreatedReplay> createReplay(redis::Connection& redis,
                                          const invocation::StreamKeys& keys,
                                          const ReplaySpec& spec, const std::string& id);

/// Redis's clock in Unix ms (TIME): stream ids, and so replay windows, are on it.
redis::Result<std::int64_t> redisNowMs(redis::Connection& redis);

/// The newest id ever removed from stream `key` (XINFO STREAM `max-deleted-entry-id`, Redis 7):
/// what a window older than it may have lost. 0-0 when nothing was removed; nullopt when the
/// stream does not exist or the server does not say (Redis 6).
redis::Result<std::optional<std::string>> lastRemovedId(redis::Connection& redis,
                                                        const std::string& key);

/// The part of [`from`, `to`] that lost entries: [`from`, min(`to`, last removed id)], or
/// nullopt when nothing of it was removed. On a server that does not say what it removed, a
/// window that starts before the stream's first entry is taken as having lost its start.
redis::Result<std::optional<std::pair<std::string, std::string>>> removedPart(
    redis::Connection& redis, const std::string& key, const std::string& from,
    const std::string& to);

/// What of a stream window is no longer held (removedPart(), less what `archive` keeps) and the
/// retention that removed it (docs/replay.md "Missing entries"); nullopt when nothing is. When
/// no worker recorded its retention in Redis, `stream_retention` (the caller's
/// REDIS_STREAM_RETENTION; 0: none) names it for a part that starts before it.
redis::Result<std::optional<MissingPart>> missingOfWindow(
    redis::Connection& redis, const invocation::StreamKeys& keys, const std::string& from,
    const std::string& to, const std::string& archive, const std::string& app,
    std::chrono::milliseconds stream_retention);

/// A new replay id: `r-<unix ms>-<4 hex>`.
std::string newReplayId(std::int64_t now_ms, std::uint32_t random);

/// The replay `id`, or nullopt when there is none.
redis::Result<std::optional<ReplayStatus>> readReplay(redis::Connection& redis,
                                                      const invocation::StreamKeys& keys,
                                                      std::string_view id);
/// Every replay the group still knows, newest first.
redis::Result<std::vector<ReplayStatus>> listReplays(redis::Connection& redis,
                                                     const invocation::StreamKeys& keys);

/// What cancelReplay() did.
struct ReplayCancellation {
  bool stopped = false;     // it was running and is cancelled now (false: it had finished)
  long long copies = 0;     // copies it had published
  long long cancelled = 0;  // ... whose invocations were cancelled (not finished yet)
  long long running = 0;    // ... of which an attempt was running: its worker stops it
  std::vector<std::string> errors;
};

/// Stops replay `id` (its driver publishes nothing more: the publication script checks the
/// state) and cancels the invocations of the copies it published that have not finished
/// (LifecycleStore::cancel of each copy), so a cancelled replay leaves nothing to run.
redis::Result<ReplayCancellation> cancelReplay(redis::Connection& redis,
                                               const invocation::StreamKeys& keys,
                                               invocation::LifecycleStore& store,
                                               std::string_view id, bool dead_letter);

}  // namespace relay::history
