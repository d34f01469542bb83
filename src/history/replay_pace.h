#pragma once

#include <cstddef>
#include <deque>
#include <optional>
#include <utility>

#include "common/clock.h"

namespace relay::history {

/// `--rate` of a replay's copies (docs/replay.md "Windows"): at most `window()` copies in any
/// window()/rate seconds, so at most N copies in any second at N/s (a rate below 1: one copy
/// every 1/rate seconds). A page waits until the copy window() places before its last one has
/// been in the stream that long; a copy was in the stream by the reply of the script that
/// published it (its XADD ran before), so the rule holds for the XADD times themselves. A drive
/// that fell behind (a slow read, a stalled Redis) does not catch up in a burst: the wait is
/// counted from what was published, never from a schedule. Not thread-safe: one drive's.
class ReplayPace {
 public:
  /// `rate` copies a second; 0 or less: no pacing.
  explicit ReplayPace(double rate);

  /// The copies of any window: the rate's whole copies a second, at least one (0: no pacing).
  std::size_t window() const { return window_; }
  /// The copies a page holds: at most `limit`, and at most a window's, so that a page never
  /// waits for copies of its own.
  std::size_t pageSize(std::size_t limit) const;
  /// When a page of `copies` may be published; nullopt: at once.
  std::optional<MonoTime> earliest(std::size_t copies) const;
  /// Records a page of `copies` published, the reply of its script received at `at`.
  void published(std::size_t copies, MonoTime at);

 private:
  /// Copies published up to the end of the newest page (its last copy's index + 1).
  std::size_t total() const { return pages_.empty() ? 0 : pages_.back().first; }

  std::size_t window_;
  MonoTime::duration span_{};  // how long window_ copies take at the rate
  /// The pages a later page may still have to wait for, oldest first (the newest always kept):
  /// the copies published up to the end of each and its reply.
  std::deque<std::pair<std::size_t, MonoTime>> pages_;
};

}  // namespace relay::history
