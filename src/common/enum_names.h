#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>

namespace relay {

/// An enum's values with the names configuration and records spell them with: the one table
/// both directions read, so a name and its parse cannot drift apart.
template <typename E, std::size_t N>
struct EnumNames {
  std::array<std::pair<E, std::string_view>, N> entries;

  /// The name of `value`; empty for a value the table lacks.
  constexpr std::string_view name(E value) const {
    for (const auto& [known, spelled] : entries) {
      if (known == value) return spelled;
    }
    return {};
  }
  /// The value named exactly `text`; nullopt for anything else.
  constexpr std::optional<E> parse(std::string_view text) const {
    for (const auto& [value, spelled] : entries) {
      if (spelled == text) return value;
    }
    return std::nullopt;
  }
};

}  // namespace relay
