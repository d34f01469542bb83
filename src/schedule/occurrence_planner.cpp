#include "schedule/occurrence_planner.h"

#include <algorithm>
#include <iterator>

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

void OccurrencePlanner::markDone(const std::string& key, std::optional<WallTime> occurrence) {
  schedules_[key] = now_;
  if (!occurrence || recheck_per_schedule_ == 0) return;
  std::deque<RecentOccurrence>& recent = recent_[key];
  recent.push_back({key, *occurrence, now_});
  while (recent.size() > recheck_per_schedule_) recent.pop_front();
}

void OccurrencePlanner::endRound() {
  std::erase_if(schedules_, [&](const auto& schedule) { return !seen_.count(schedule.first); });
  for (auto schedule = recent_.begin(); schedule != recent_.end();) {
    std::deque<RecentOccurrence>& recent = schedule->second;
    while (!recent.empty() && recent.front().dealt_at < now_ - recheck_window_) {
      recent.pop_front();
    }
    const bool drop = recent.empty() || !seen_.count(schedule->first);
    schedule = drop ? recent_.erase(schedule) : std::next(schedule);
  }
  previous_round_ = now_;
}

std::vector<RecentOccurrence> OccurrencePlanner::recent() const {
  std::vector<RecentOccurrence> found;
  for (const auto& [key, recent] : recent_) {
    for (const RecentOccurrence& occurrence : recent) {
      if (occurrence.dealt_at >= now_ - catch_up_window_) found.push_back(occurrence);
    }
  }
  return found;
}

std::optional<WallTime> OccurrencePlanner::watermark(const std::string& key) const {
  const auto found = schedules_.find(key);
  return found == schedules_.end() ? std::nullopt : found->second;
}

}  // namespace relay::schedule
