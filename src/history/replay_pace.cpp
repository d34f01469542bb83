#include "history/replay_pace.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace relay::history {

ReplayPace::ReplayPace(double rate)
    : window_(rate <= 0 ? 0
                        : std::max<std::size_t>(1, static_cast<std::size_t>(std::floor(rate)))) {
  if (window_ > 0) {
    span_ = std::chrono::duration_cast<MonoTime::duration>(
        std::chrono::duration<double>(static_cast<double>(window_) / rate));
  }
}

std::size_t ReplayPace::pageSize(std::size_t limit) const {
  return window_ == 0 ? limit : std::min(limit, window_);
}

std::optional<MonoTime> ReplayPace::earliest(std::size_t copies) const {
  if (window_ == 0 || copies == 0) return std::nullopt;
  // The page's last copy follows the copy `window_` places before it by a whole window.
  const std::size_t last = total() + copies - 1;
  if (last < window_) return std::nullopt;
  const std::size_t before = last - window_;
  for (const auto& [end, reply] : pages_) {
    if (before < end) {
      return reply + span_;
    }
  }
  return std::nullopt;  // not reached for a page of at most pageSize() copies
}

void ReplayPace::published(std::size_t copies, MonoTime at) {
  if (window_ == 0 || copies == 0) return;
  const std::size_t total = this->total() + copies;
  pages_.emplace_back(total, at);
  // A later page's last copy is at least `total`, so it waits for copies from total - window_
  // on: a page that ends before that is no longer needed.
  while (total >= window_ && pages_.front().first <= total - window_) pages_.pop_front();
}

}  // namespace relay::history
