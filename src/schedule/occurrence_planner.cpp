#include "schedule/occurrence_planner.h"

#include <algorithm>

#include "schedule/next_fire.h"

namespace relay::schedule {

std::optional<WallTime> latestFireTime(const CronExpression& cron, const TimeZone& zone,
                                       WallTime after, WallTime until) {
  // Walks forward: at most one step per fire time in the window (1440 for `* * * * *` over a
  // day), paid once per catch-up; a round every minute takes one or two steps.
  std::optional<WallTime> latest;
  for (auto next = nextFireTime(cron, zone, after); next && *next <= until;
       next = nextFireTime(cron, zone, *next)) {
    latest = next;
  }
  return latest;
}

void OccurrencePlanner::beginRound(WallTime now) {
  now_ = now;
  seen_.clear();
}

std::optional<WallTime> OccurrencePlanner::due(const std::string& key, const CronExpression& cron,
                                               const TimeZone& zone) {
  seen_.insert(key);
  auto [state, added] = schedules_.try_emplace(key);
  if (added && previous_round_) state->second = previous_round_;
  WallTime lower = now_ - catch_up_window_;
  if (state->second) lower = std::max(lower, *state->second);
  return latestFireTime(cron, zone, lower, now_);
}

void OccurrencePlanner::markDone(const std::string& key) { schedules_[key] = now_; }

void OccurrencePlanner::endRound() {
  std::erase_if(schedules_, [&](const auto& schedule) { return !seen_.count(schedule.first); });
  previous_round_ = now_;
}

std::optional<WallTime> OccurrencePlanner::watermark(const std::string& key) const {
  const auto found = schedules_.find(key);
  return found == schedules_.end() ? std::nullopt : found->second;
}

}  // namespace relay::schedule
