#include "stream/stream_id.h"

#include <limits>

#include "common/whole_number.h"

namespace relay::stream {

std::optional<StreamId> StreamId::parse(std::string_view text) {
  const std::size_t dash = text.find('-');
  StreamId id;
  if (!parseWholeNumber(text.substr(0, dash), id.ms)) return std::nullopt;
  if (dash != std::string_view::npos && !parseWholeNumber(text.substr(dash + 1), id.seq)) {
    return std::nullopt;
  }
  return id;
}

std::string StreamId::toString() const { return std::to_string(ms) + "-" + std::to_string(seq); }

std::optional<StreamId> StreamId::next() const {
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  if (seq < kMax) return StreamId{ms, seq + 1};
  if (ms < kMax) return StreamId{ms + 1, 0};
  return std::nullopt;
}

std::optional<StreamId> StreamId::previous() const {
  if (seq > 0) return StreamId{ms, seq - 1};
  if (ms > 0) return StreamId{ms - 1, std::numeric_limits<std::uint64_t>::max()};
  return std::nullopt;
}

}  // namespace relay::stream
