#include "invocation/marker.h"

#include <vector>

#include "common/whole_number.h"

namespace relay::invocation {
namespace {

std::vector<std::string_view> split(std::string_view text) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t colon = text.find(':', start);
    parts.push_back(text.substr(start, colon - start));
    if (colon == std::string_view::npos) return parts;
    start = colon + 1;
  }
}

}  // namespace

std::optional<Marker> Marker::parse(std::string_view text) {
  const std::vector<std::string_view> parts = split(text);
  Marker marker;
  if (parts.size() < 2 || !parseWholeNumber(parts[1], marker.attempt) || marker.attempt < 0) {
    return std::nullopt;
  }
  const std::string_view kind = parts[0];
  if ((kind == "running" || kind == "claimed") && parts.size() == 4 &&
      parseWholeNumber(parts[3], marker.deadline_ms)) {
    marker.state = kind == "running" ? State::kRunning : State::kClaimed;
    marker.token = parts[2];
  } else if ((kind == "failed" || (kind == "deferred" && parts.size() == 4)) &&
             (parts.size() == 3 || parts.size() == 4) &&
             parseWholeNumber(parts[2], marker.next_attempt_ms)) {
    marker.state = State::kFailed;
    marker.deferred = kind == "deferred";
    if (parts.size() == 4) marker.token = parts[3];
  } else if ((kind == "deduplicated" || kind == "superseded") && parts.size() == 3 &&
             !parts[2].empty()) {
    marker.state = kind == "deduplicated" ? State::kDeduplicated : State::kSuperseded;
    marker.other = parts[2];
  } else if (kind == "succeeded" && (parts.size() == 2 || parts.size() == 3)) {
    marker.state = State::kSucceeded;
    if (parts.size() == 3) marker.token = parts[2];
  } else if ((kind == "exhausted" || kind == "expired") &&
             (parts.size() == 3 || (parts.size() == 4 && parts[3] == "dlq"))) {
    marker.state = kind == "exhausted" ? State::kExhausted : State::kExpired;
    marker.token = parts[2];
    marker.dlq_written = parts.size() == 4;
  } else if (kind == "cancelled" &&
             (parts.size() == 3 ||
              (parts.size() == 4 && (parts[3] == "owed" || parts[3] == "dlq")))) {
    marker.state = State::kCancelled;
    marker.token = parts[2];
    marker.dead_letter = parts.size() == 4;
    marker.dlq_written = parts.size() == 4 && parts[3] == "dlq";
  } else {
    return std::nullopt;
  }
  return marker;
}

std::string Marker::format() const {
  const std::string a = std::to_string(attempt);
  switch (state) {
    case State::kClaimed:
      return "claimed:" + a + ":" + token + ":" + std::to_string(deadline_ms);
    case State::kRunning:
      return "running:" + a + ":" + token + ":" + std::to_string(deadline_ms);
    case State::kFailed:
      return (deferred ? "deferred:" : "failed:") + a + ":" + std::to_string(next_attempt_ms) +
             ":" + token;
    case State::kSucceeded:
      return "succeeded:" + a + ":" + token;
    case State::kExhausted:
      return "exhausted:" + a + ":" + token + (dlq_written ? ":dlq" : "");
    case State::kDeduplicated:
      return "deduplicated:" + a + ":" + other;
    case State::kSuperseded:
      return "superseded:" + a + ":" + other;
    case State::kExpired:
      return "expired:" + a + ":" + token + (dlq_written ? ":dlq" : "");
    case State::kCancelled:
      return "cancelled:" + a + ":" + token + (dlq_written ? ":dlq" : dead_letter ? ":owed" : "");
  }
  return {};
}

}  // namespace relay::invocation
