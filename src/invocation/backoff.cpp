#include "invocation/backoff.h"

#include <algorithm>

namespace relay::invocation {

std::chrono::milliseconds BackoffTable::after(int failed_attempt) const {
  if (delays.empty()) return std::chrono::milliseconds(0);
  const auto index = static_cast<std::size_t>(std::max(failed_attempt, 1) - 1);
  return delays[std::min(index, delays.size() - 1)];
}

std::chrono::milliseconds retryDelay(int failed_attempt) {
  static const BackoffTable kTable;
  return kTable.after(failed_attempt);
}

}  // namespace relay::invocation
