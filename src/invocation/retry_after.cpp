#include "invocation/retry_after.h"

#include <cctype>
#include <string>

#include "common/duration.h"
#include "common/whole_number.h"

namespace relay::invocation {
namespace {

constexpr std::string_view kRetryAfterKey = "retry-after:";

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) {
    text.remove_suffix(1);
  }
  return text;
}

}  // namespace

std::optional<std::chrono::milliseconds> parseRetryAfter(std::string_view line) {
  line = trimmed(line);
  if (line.size() <= kRetryAfterKey.size()) return std::nullopt;
  for (std::size_t i = 0; i < kRetryAfterKey.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(line[i])) != kRetryAfterKey[i]) {
      return std::nullopt;
    }
  }
  const std::string_view value = trimmed(line.substr(kRetryAfterKey.size()));
  long long seconds = 0;
  if (parseWholeNumber(value, seconds)) {
    if (seconds < 0 || seconds > 365LL * 24 * 3600) return std::nullopt;
    return std::chrono::seconds(seconds);
  }
  auto delay = parseDuration(value);
  if (!delay.ok() || delay->count() < 0) return std::nullopt;
  return *delay;
}

}  // namespace relay::invocation
