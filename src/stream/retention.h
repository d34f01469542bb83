#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "stream/stream_id.h"

namespace relay::stream {

/// Where one consumer group stands in the stream: what XINFO GROUPS and XPENDING report.
struct GroupPosition {
  std::string name;
  StreamId last_delivered;                // XINFO GROUPS last-delivered-id (0-0: nothing read)
  std::optional<StreamId> first_pending;  // the smallest id in its PEL; nullopt when empty
  long long pending = 0;                  // its PEL size (XPENDING)
};

/// REDIS_STREAM_RETENTION (docs/operations.md "Retention"): the MINID for `XTRIM <stream> MINID`
/// that removes only entries that (a) every group has been delivered (id <= its last-delivered-id)
/// and has acknowledged (id < its smallest pending id), and (b) are older than `retention`
/// (their millisecond part is before now - retention). Entries at or above the returned id
/// stay. Nullopt means trim nothing: retention 0, no group at all (nobody has read anything),
/// or a cut-off before the epoch.
///
/// The positions must be gathered in this order: last-delivered ids first (XINFO GROUPS), then
/// the pending ids (XPENDING). An entry delivered between the two reads is above the
/// last-delivered id already read, so it can never fall below the returned id, pending or not.
std::optional<StreamId> streamTrimId(const std::vector<GroupPosition>& groups, WallTime now,
                                     std::chrono::milliseconds retention);

/// A pending entry that keeps trimming from removing what retention would remove.
struct TrimHoldback {
  std::string group;  // whose PEL holds it
  StreamId id;        // the smallest pending id of that group
};

/// Whether a pending entry holds trimming back (docs/operations.md "Retention"): the smallest
/// pending id of all groups when, without the pending entries, streamTrimId() would have
/// trimmed it (it is older than the retention, and every group has read past it). Nullopt
/// when nothing pending is in the way (or nothing would be trimmed anyway).
std::optional<TrimHoldback> trimHeldBack(const std::vector<GroupPosition>& groups, WallTime now,
                                         std::chrono::milliseconds retention);

/// REDIS_DLQ_RETENTION: the MINID that trims DLQ entries older than `retention` (their id's
/// millisecond part is when they were written). Nullopt for retention 0 or a cut-off before the
/// epoch.
std::optional<StreamId> ageTrimId(WallTime now, std::chrono::milliseconds retention);

}  // namespace relay::stream
