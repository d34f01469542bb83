#include "history/replay_pace.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace relay::history {

ReplayPace::ReplayPace(double rate)
    : rate_(rate),
      window_(rate <= 0 ? 0
                        : std::max<std::size_t>(1, static_cast<std::size_t>(std::floor(rate)))) {}

std::optional<MonoTime> ReplayPace::earliest(std::size_t copies) const {
  if (window_ == 0 || copies == 0) return std::nullopt;
  // The page's last copy follows the copy `window_` places before it by a whole window.
  const std::size_t last = total_ + copies - 1;
  if (last < window_) return std::nullopt;
  const std::size_t before = last - window_;
  for (const auto& [end, reply] : pages_) {
    if (before < end) {
      return reply + std::chrono::duration_cast<MonoTime::duration>(
                         std::chrono::duration<double>(static_cast<double>(window_) / rate_));
    }
  }
  return std::nullopt;  // not reached: every copy before `total_` is in a page kept
}

void ReplayPace::published(std::size_t copies, MonoTime at) {
  if (window_ == 0 || copies == 0) return;
  total_ += copies;
  pages_.emplace_back(total_, at);
  // A later page's last copy is at least total_, so it waits for copies from total_ - window_
  // on: a page that ends before that is no longer needed.
  while (total_ >= window_ && !pages_.empty() && pages_.front().first <= total_ - window_) {
    pages_.pop_front();
  }
}

}  // namespace relay::history
