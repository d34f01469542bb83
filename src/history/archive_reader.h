#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "invocation/keys.h"
#include "redis/connection.h"
#include "stream/stream_entry.h"
#include "stream/stream_id.h"

namespace relay::history {

/// Which archive keeps `app`'s history (docs/replay.md "Archive"): the app's own
/// (`relay:<stream>:archive:<group>:<app>`) when an archiver recorded it, else the stream's
/// (`relay:<stream>:archive:<group>`) when one is recorded, else "" (none). With `app` empty,
/// only the stream's. An archive is recorded (`archive:<key>` in `relay:<stream>:retention`)
/// by the worker that archives, with its retention.
redis::Result<std::string> archiveFor(redis::Connection& redis, const invocation::StreamKeys& keys,
                                      std::string_view app);

/// What a read of an archive returned: the archive read ("" when none keeps the app's
/// history, then `entries` is empty) and its entries.
struct ArchivePage {
  std::string archive;
  std::vector<stream::StreamEntry> entries;
};

/// The archived entries of `app` (archiveFor()) with ids in [`from`, `to`], in id order, at
/// most `count`, each with its ORIGINAL stream id and its fields verbatim. A window longer than
/// `count` is read page after page: the next page starts at the last id's next().
redis::Result<ArchivePage> readArchive(redis::Connection& redis, const invocation::StreamKeys& keys,
                                       std::string_view app, stream::StreamId from,
                                       stream::StreamId to, std::size_t count);

/// One archive as `relay stats` shows it.
struct ArchiveStatus {
  std::string key;
  std::string app;                         // "" for the stream's archive
  long long entries = 0;                   // XLEN
  std::optional<stream::StreamId> oldest;  // its first entry; nullopt when empty
  std::optional<stream::StreamId> newest;  // its last entry
  long long retention_ms = 0;              // as the archiving worker recorded it
};

/// The archiver's position (`relay:<stream>:archiver:<group>`).
struct ArchiverStatus {
  std::string owner;       // the worker holding (or last holding) the lease; "" never ran
  std::string cursor;      // the last stream id it dealt with
  long long archived = 0;  // copies written since it first ran
  long long gaps = 0;      // stretches the stream lost before they were archived
  long long lost = 0;      // the entries in them
  std::string last_gap_from, last_gap_to;
  /// Age in ms of the first stream entry past the cursor (0: caught up), from the stream's
  /// entries and `now_ms`.
  long long lag_ms = 0;
};

struct ArchivesStatus {
  std::vector<ArchiveStatus> archives;
  ArchiverStatus archiver;
};

/// Every recorded archive of the stream, and the archiver's position; a few round trips.
redis::Result<ArchivesStatus> readArchivesStatus(redis::Connection& redis,
                                                 const invocation::StreamKeys& keys,
                                                 long long now_ms);

}  // namespace relay::history
