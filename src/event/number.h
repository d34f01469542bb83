#pragma once

#include <string_view>

namespace relay::event::detail {

/// Converts a JSON number token the decoder validated into the nearest double: integers beyond
/// 2^53 round, magnitudes beyond the double range are ±infinity, tiny ones 0 (never -0).
double parseJsonNumber(std::string_view text);

}  // namespace relay::event::detail
