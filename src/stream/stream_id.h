#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace relay::stream {

/// A Redis stream entry id `<ms>-<seq>`, ordered as Redis orders them.
struct StreamId {
  std::uint64_t ms = 0;
  std::uint64_t seq = 0;

  auto operator<=>(const StreamId&) const = default;

  /// Parses `<ms>-<seq>` or a bare `<ms>` (sequence 0), both unsigned 64-bit decimals; nullopt
  /// for anything else (signs, spaces, `*`, `-`, `+`, overflow).
  static std::optional<StreamId> parse(std::string_view text);
  std::string toString() const;
  /// The smallest id greater than this one; nullopt for the largest possible id.
  std::optional<StreamId> next() const;
  /// The largest id smaller than this one; nullopt for 0-0.
  std::optional<StreamId> previous() const;
};

}  // namespace relay::stream
