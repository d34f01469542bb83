#pragma once

#include <optional>
#include <string>

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

}  // namespace relay::history
