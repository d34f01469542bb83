#include "stream/stream_id.h"

#include <charconv>
#include <limits>

namespace relay::stream {
namespace {

std::optional<std::uint64_t> parseNumber(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<StreamId> StreamId::parse(std::string_view text) {
  const std::size_t dash = text.find('-');
  const auto ms = parseNumber(text.substr(0, dash));
  if (!ms) return std::nullopt;
  if (dash == std::string_view::npos) return StreamId{*ms, 0};
  const auto seq = parseNumber(text.substr(dash + 1));
  if (!seq) return std::nullopt;
  return StreamId{*ms, *seq};
}

std::string StreamId::toString() const { return std::to_string(ms) + "-" + std::to_string(seq); }

std::optional<StreamId> StreamId::next() const {
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  if (seq < kMax) return StreamId{ms, seq + 1};
  if (ms < kMax) return StreamId{ms + 1, 0};
  return std::nullopt;
}

}  // namespace relay::stream
