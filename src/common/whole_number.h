#pragma once

#include <charconv>
#include <string_view>
#include <system_error>
#include <type_traits>

namespace relay {

/// Whether the whole of `text` is one number of `out`'s type in `base`, as std::from_chars reads
/// it (no leading '+', spaces or `0x`, no trailing characters, no '-' for an unsigned type, in
/// range); the number goes to `out` only then. The one whole-number parse of Relay's inputs.
template <typename T>
bool parseWholeNumber(std::string_view text, T& out, int base = 10) {
  static_assert(std::is_integral_v<T>, "a whole number");
  T value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (error != std::errc() || end != text.data() + text.size()) return false;
  out = value;
  return true;
}

/// The whole number `text` starts with ("5 attempts" is 5), or `fallback` when it starts with
/// none or it is out of range. Deliberately lenient, for the counts of records Relay reads back
/// (a dead-letter entry's `handler_attempts`) where a best-effort number beats refusing the
/// record; every input a person configures goes through parseWholeNumber instead.
template <typename T>
T leadingWholeNumber(std::string_view text, T fallback = T{}) {
  static_assert(std::is_integral_v<T>, "a whole number");
  T value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() ? value : fallback;
}

}  // namespace relay
