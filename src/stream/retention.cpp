#include "stream/retention.h"

#include <algorithm>

namespace relay::stream {

std::optional<StreamId> ageTrimId(WallTime now, std::chrono::milliseconds retention) {
  if (retention.count() <= 0) return std::nullopt;
  const std::int64_t now_ms = unixMillis(now);
  if (now_ms <= retention.count()) return std::nullopt;
  // MINID keeps ids >= the cut-off: everything written in the last `retention` survives.
  return StreamId{static_cast<std::uint64_t>(now_ms - retention.count()), 0};
}

std::optional<StreamId> streamTrimId(const std::vector<GroupPosition>& groups, WallTime now,
                                     std::chrono::milliseconds retention) {
  std::optional<StreamId> bound = ageTrimId(now, retention);
  if (!bound || groups.empty()) return std::nullopt;
  for (const GroupPosition& group : groups) {
    // Everything above last-delivered is unread by this group; everything from the first
    // pending id on may still be unacknowledged.
    const std::optional<StreamId> unread = group.last_delivered.next();
    if (unread) bound = std::min(*bound, *unread);
    if (group.first_pending) bound = std::min(*bound, *group.first_pending);
  }
  // MINID 0-0 or 0-1 cannot remove anything: say so instead of sending a no-op.
  if (*bound <= StreamId{0, 1}) return std::nullopt;
  return bound;
}

std::optional<TrimHoldback> trimHeldBack(const std::vector<GroupPosition>& groups, WallTime now,
                                         std::chrono::milliseconds retention) {
  std::vector<GroupPosition> unpinned = groups;
  for (GroupPosition& group : unpinned) group.first_pending.reset();
  const std::optional<StreamId> without = streamTrimId(unpinned, now, retention);
  if (!without) return std::nullopt;
  std::optional<TrimHoldback> held;
  for (const GroupPosition& group : groups) {
    if (!group.first_pending || *group.first_pending >= *without) continue;
    if (!held || *group.first_pending < held->id)
      held = TrimHoldback{group.name, *group.first_pending};
  }
  return held;
}

}  // namespace relay::stream
