#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/snapshot.h"
#include "common/clock.h"
#include "invocation/keys.h"
#include "observability/logger.h"
#include "observability/metrics.h"
#include "pattern/pattern.h"
#include "redis/connection.h"
#include "stream/stream_id.h"

namespace relay::history {

/// The stream-wide archive of the worker configuration (RELAY_ARCHIVE_RETENTION,
/// RELAY_ARCHIVE_PATTERN_FILE; docs/replay.md "Archive").
struct StreamArchive {
  std::chrono::milliseconds retention{0};
  /// Which entries: those whose event matches; null: every entry (but replay copies and
  /// schedule occurrences).
  std::shared_ptr<const pattern::Pattern> pattern;
};

/// Fixed internals of the archiver: tests shorten them.
struct ArchiverSettings {
  /// How often a worker's archiver thread runs a pass (each pass takes or renews the lease).
  std::chrono::milliseconds interval{1'000};
  /// How long a pass's lease lasts (renewed by every batch): another worker takes over once
  /// it has run out, so a killed archiver is replaced within this.
  std::chrono::milliseconds lease{30'000};
  /// Entries read per batch (XRANGE COUNT) and the most batches one pass takes.
  std::size_t batch = 200;
  std::size_t batches_per_pass = 100'000;
  /// A pass behind the stream goes on batch after batch until it caught up or worked this long
  /// (then the thread's interval, and a graceful stop, come next).
  std::chrono::milliseconds pass_budget{5'000};
  /// How often the lease holder trims the archives by their retention.
  std::chrono::milliseconds trim_interval{60'000};
  /// MAX_EVENT_BYTES: a larger `event` is never decoded for a pattern (it is archived only by a
  /// stream archive without a pattern, verbatim).
  std::size_t max_event_bytes = 256 * 1024;
};

/// What one pass did.
struct ArchivePass {
  bool leader = false;       // this worker held the lease (else it did nothing)
  std::size_t read = 0;      // stream entries read past the cursor
  std::size_t archived = 0;  // copies written (an entry kept by two archives counts twice)
  std::size_t gaps = 0;      // stretches trimmed from the stream before they were read
  long long trimmed = 0;     // archive entries removed by retention
  std::string cursor;        // the last stream id the archiver has dealt with
  bool caught_up = false;    // the pass reached the stream's end
};

/// Copies the stream's entries that an archive keeps into Redis streams under their original
/// ids (docs/replay.md "Archive"): each app's archive `relay:<stream>:archive:<group>:<app>`
/// (its `archive.pattern`, else any of its rules, at the entry's publication time) and the
/// stream-wide one `relay:<stream>:archive:<group>`. Replay copies (`relay_replay`) and schedule
/// occurrences (`relay_schedule`) are never archived.
///
/// One worker at a time archives: a lease and the cursor live in `relay:<stream>:archiver:
/// <group>`, taken and advanced by Lua scripts on Redis time. The cursor moves only after the
/// batch's copies are written, and an XADD of an id the archive already holds fails harmlessly,
/// so a worker killed mid-batch leaves neither a gap nor a duplicate: its successor repeats the
/// batch. When the stream lost entries past the cursor before they were read (trimming ahead of
/// the archiver), the gap is recorded in the archiver's hash, logged and counted.
/// Not thread-safe: one pass at a time (the worker's archiver thread).
class Archiver {
 public:
  using SnapshotSource = std::function<std::shared_ptr<const app::Snapshot>()>;

  Archiver(invocation::StreamKeys keys, std::string owner,
           std::optional<StreamArchive> stream_archive, SnapshotSource snapshot,
           ArchiverSettings settings, observability::Metrics& metrics,
           observability::Logger& logger, Clock& clock);

  /// One pass on the caller's connection: takes (or renews) the lease, archives up to
  /// `batches_per_pass` batches past the cursor, records gaps, trims the archives when due.
  /// Without the lease, or with no archive configured, it only returns (leader false).
  redis::Result<ArchivePass> passOnce(redis::Connection& redis);

  /// Trims every archive recorded in `relay:<stream>:retention` by its retention (also those of
  /// apps removed since), and records the current archives' retentions first. Entries removed.
  redis::Result<long long> trimOnce(redis::Connection& redis);

  /// Gives the lease up (a graceful stop): the next worker need not wait for it to run out.
  void release(redis::Connection& redis);

  const ArchiverSettings& settings() const { return settings_; }

 private:
  struct Target;
  std::vector<Target> targets() const;

  invocation::StreamKeys keys_;
  std::string owner_;
  std::optional<StreamArchive> stream_archive_;
  SnapshotSource snapshot_;
  ArchiverSettings settings_;
  observability::Metrics& metrics_;
  observability::Logger& logger_;
  Clock& clock_;
  std::optional<MonoTime> next_trim_;  // nullopt: trim on the first pass as leader
};

}  // namespace relay::history
