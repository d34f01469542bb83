#pragma once

#include <charconv>
#include <string_view>
#include <system_error>

namespace relay {

/// Whether the whole of `text` is one number of `out`'s type, as std::from_chars reads it (no
/// leading '+' or spaces, no trailing characters, no '-' for an unsigned type, in range); the
/// number goes to `out` only then.
template <typename T>
bool parseWholeNumber(std::string_view text, T& out) {
  T value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return false;
  out = value;
  return true;
}

}  // namespace relay
