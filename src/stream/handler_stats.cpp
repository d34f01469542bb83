#include "stream/handler_stats.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>

#include "common/whole_number.h"

namespace relay::stream {
namespace {

std::optional<double> parseSeconds(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

std::string statsField(std::string_view app, std::string_view handler, std::string_view counter) {
  return std::string(app) + "/" + std::string(handler) + ":" + std::string(counter);
}

std::vector<HandlerStats> parseStats(const std::vector<std::pair<std::string, std::string>>& hash) {
  std::map<std::pair<std::string, std::string>, HandlerStats> rows;
  for (const auto& [field, value] : hash) {
    // App names never hold `/` and counter names never hold `:`; a handler path may hold both.
    const std::size_t colon = field.rfind(':');
    const std::size_t slash = field.find('/');
    if (colon == std::string::npos || slash == std::string::npos || slash > colon) continue;
    const std::string app = field.substr(0, slash);
    const std::string handler = field.substr(slash + 1, colon - slash - 1);
    const std::string_view counter = std::string_view(field).substr(colon + 1);
    HandlerStats candidate;
    if (counter == kStatsDuration) {
      const auto seconds = parseSeconds(value);
      if (!seconds) continue;
      candidate.duration_seconds = *seconds;
    } else {
      long long count = 0;
      if (!parseWholeNumber(value, count)) continue;
      if (counter == kStatsSucceeded) {
        candidate.succeeded = count;
      } else if (counter == kStatsFailed) {
        candidate.failed = count;
      } else if (counter == kStatsDeadLettered) {
        candidate.dead_lettered = count;
      } else if (counter == kStatsDeferred) {
        candidate.deferred = count;
      } else if (counter == kStatsDeduplicated) {
        candidate.deduplicated = count;
      } else if (counter == kStatsSuperseded) {
        candidate.superseded = count;
      } else if (counter == kStatsRetryAfter) {
        candidate.retry_after = count;
      } else if (counter == kStatsCancelled) {
        candidate.cancelled = count;
      } else {
        continue;
      }
    }
    HandlerStats& row = rows[{app, handler}];
    row.app = app;
    row.handler = handler;
    row.succeeded += candidate.succeeded;
    row.failed += candidate.failed;
    row.dead_lettered += candidate.dead_lettered;
    row.duration_seconds += candidate.duration_seconds;
    row.deferred += candidate.deferred;
    row.deduplicated += candidate.deduplicated;
    row.superseded += candidate.superseded;
    row.retry_after += candidate.retry_after;
    row.cancelled += candidate.cancelled;
  }
  std::vector<HandlerStats> out;
  out.reserve(rows.size());
  for (auto& [key, row] : rows) out.push_back(std::move(row));
  return out;
}

}  // namespace relay::stream
