#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "invocation/keys.h"
#include "redis/connection.h"
#include "stream/stream_id.h"

namespace relay::history {

/// A part of a replay's window that neither the stream nor an archive holds any more, and
/// which retention removed it (docs/replay.md "Missing entries").
struct MissingPart {
  std::string from;  // the window's start
  std::string to;    // the last id before what is still held
  std::string reason;
};

/// What of [`from`, `to`] is gone, given the stream's first entry (nullopt: the stream is
/// empty) and the archive that serves older entries ("" none). The reason names the retention
/// the workers report in `relay:<stream>:retention` (stream::Trimmer, history::Archiver).
redis::Result<std::optional<MissingPart>> missingPart(redis::Connection& redis,
                                                      const invocation::StreamKeys& keys,
                                                      stream::StreamId from, stream::StreamId to,
                                                      std::optional<stream::StreamId> stream_first,
                                                      const std::string& archive,
                                                      const std::string& app);

/// Records in `relay:<stream>:retention` the retention a worker applies to `field`: `stream`
/// (REDIS_STREAM_RETENTION) or `archive:<key>` (an archive's), in milliseconds.
redis::Status recordRetention(redis::Connection& redis, const invocation::StreamKeys& keys,
                              const std::string& field, std::chrono::milliseconds retention);

/// Records how far the stream's retention trimmed (`stream_trimmed_to`: the MINID it used).
redis::Status recordStreamTrim(redis::Connection& redis, const invocation::StreamKeys& keys,
                               stream::StreamId min_id);

/// An archive some worker recorded (`archive:<key>` in `relay:<stream>:retention`) and its
/// retention: the archiver trims every one, also those of apps removed since.
struct RecordedArchive {
  std::string key;
  std::chrono::milliseconds retention{0};
};
redis::Result<std::vector<RecordedArchive>> recordedArchives(redis::Connection& redis,
                                                             const invocation::StreamKeys& keys);

}  // namespace relay::history
