#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "invocation/keys.h"
#include "redis/connection.h"
#include "stream/stream_id.h"

namespace relay::stream {

/// How ensureGroup() found the consumer group.
struct GroupEnsured {
  enum class Kind {
    kExisted,    // left alone
    kCreated,    // created at 0: no position was recorded (the group's first creation)
    kRecreated,  // missing although a position was recorded: created again there
  };
  Kind kind = Kind::kExisted;
  std::string at;  // the id it was created at
};

/// Creates the consumer group when it is missing (`XGROUP CREATE ... MKSTREAM`, one script):
/// at the position recorded in `keys.groupRecord()` when there is one (the group existed and
/// was destroyed: XGROUP DESTROY, a restore without it), else at 0, its first creation, which
/// records position 0-0. A re-creation also leaves `recreated_ms`, `recreated_at` and
/// `unreported` in the record for takeRecreation(). An existing group is left alone.
redis::Result<GroupEnsured> ensureGroup(redis::Connection& redis,
                                        const invocation::StreamKeys& keys);

/// Where a group that vanished now would be re-created so that nothing unacknowledged is
/// skipped: just before its smallest pending id (the PEL goes with the group, so those entries
/// must be delivered again), else its last-delivered id. Pure.
StreamId resumePosition(const StreamId& last_delivered,
                        const std::optional<StreamId>& first_pending);

/// Records the group's position (the housekeeper, every refresh): `position` (resumePosition())
/// and `last_delivered`.
redis::Status recordGroupPosition(redis::Connection& redis, const invocation::StreamKeys& keys,
                                  const StreamId& last_delivered,
                                  const std::optional<StreamId>& first_pending);

/// A re-creation ensureGroup() made and nobody has reported yet.
struct GroupRecreation {
  std::string at;            // the recorded position it was created at
  std::int64_t when_ms = 0;  // Redis time
};

/// Takes the unreported re-creation, if any: exactly one caller of all workers gets it (HDEL
/// of `unreported`), so exactly one logs it.
redis::Result<std::optional<GroupRecreation>> takeRecreation(redis::Connection& redis,
                                                             const invocation::StreamKeys& keys);

}  // namespace relay::stream
