#pragma once

#include <string_view>

namespace relay::event::detail {

/// An ASCII digit, 0-9 (one comparison; no locale).
constexpr bool isDigit(char c) { return static_cast<unsigned char>(c - '0') < 10; }

/// Converts a JSON number token the decoder validated into the nearest double: integers beyond
/// 2^53 round, magnitudes beyond the double range are ±infinity, tiny ones 0 (never -0).
double parseJsonNumber(std::string_view text);

}  // namespace relay::event::detail
