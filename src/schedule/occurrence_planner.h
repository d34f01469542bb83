#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
#include "schedule/cron.h"
#include "schedule/time_zone.h"

namespace relay::schedule {

/// The latest fire time `t` with `after < t <= until`, or nullopt when there is none. Pure.
std::optional<WallTime> latestFireTime(const CronExpression& cron, const TimeZone& zone,
                                       WallTime after, WallTime until);

/// An occurrence a round dealt with (published, or found already published), kept so that later
/// rounds can check that Redis still has it (docs/schedules.md "Failover").
struct RecentOccurrence {
  std::string key;        // the schedule's key as given to due()
  WallTime scheduled_at;  // the occurrence
  WallTime dealt_at;      // the time of the round that dealt with it
};

/// Decides which occurrence of each schedule an evaluation round publishes (docs/schedules.md
/// "Catch-up"): at most ONE per schedule and round, the latest fire time not yet dealt with and no
/// older than the catch-up window. A round every minute thus publishes each minute's occurrence;
/// the first round after a start, or the first successful one after a Redis outage, publishes only
/// the latest occurrence missed within the window. Remembers per schedule the time up to which
/// every fire time was dealt with (a watermark), in memory only. Pure: the caller passes the
/// time. Also remembers, per schedule, the occurrences dealt with during the last
/// `recheck_window` of complete rounds (at most `recheck_per_schedule`), which a failover may
/// have undone. Not thread-safe (one publisher thread owns it).
class OccurrencePlanner {
 public:
  explicit OccurrencePlanner(std::chrono::minutes catch_up_window = std::chrono::hours(24),
                             std::chrono::minutes recheck_window = std::chrono::minutes(10),
                             std::size_t recheck_per_schedule = 10)
      : catch_up_window_(catch_up_window),
        recheck_window_(recheck_window),
        recheck_per_schedule_(recheck_per_schedule) {}

  /// Starts a round at `now`.
  void beginRound(WallTime now);
  /// The occurrence of schedule `key` (any stable name, e.g. `app/schedule`) to publish in this
  /// round: the latest fire time in (lower, now], lower = max(watermark, now - window). A
  /// schedule never seen before has no watermark in the first round (catch-up) and the previous
  /// round's time in later ones (a schedule added while the worker runs has missed nothing).
  std::optional<WallTime> due(const std::string& key, const CronExpression& cron,
                              const TimeZone& zone);
  /// Every fire time of `key` up to this round's time is dealt with (`occurrence` published or
  /// found already published, or nothing was due). Until then the schedule stays in catch-up.
  void markDone(const std::string& key, std::optional<WallTime> occurrence = std::nullopt);
  /// Ends a round that evaluated every schedule: forgets the ones it did not see (removed), and
  /// the recent occurrences dealt with more than the recheck window before this round. A round
  /// abandoned half-way (Redis failed) must not end, so nothing is forgotten: the first complete
  /// round after an outage still rechecks what was dealt with just before it, however long it was.
  void endRound();
  /// The occurrences dealt with in earlier rounds that are still to be rechecked, per schedule
  /// oldest first; none dealt with longer than the catch-up window ago (their dedupe keys may
  /// have expired, which would make a lost write of what is only an expired key).
  std::vector<RecentOccurrence> recent() const;

  /// The watermark of `key`: nullopt while it is in catch-up or unknown. For tests and logs.
  std::optional<WallTime> watermark(const std::string& key) const;

 private:
  std::chrono::minutes catch_up_window_;
  std::chrono::minutes recheck_window_;
  std::size_t recheck_per_schedule_;
  WallTime now_{};
  std::optional<WallTime> previous_round_;                      // the last round that ended
  std::map<std::string, std::optional<WallTime>> schedules_;    // nullopt: catching up
  std::set<std::string> seen_;                                  // in the current round
  std::map<std::string, std::deque<RecentOccurrence>> recent_;  // oldest first
};

}  // namespace relay::schedule
