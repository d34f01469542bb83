#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "common/result.h"

namespace relay {

using Millis = std::chrono::milliseconds;

/// Parses a duration such as `500ms`, `90s`, `1h30m` or `7d`: one or more <digits><unit>
/// groups, units d, h, m, s, ms each at most once and in that (descending) order. `0` alone is
/// zero. Rejects signs, spaces, fractions, bare numbers and overflow with a message saying what
/// was expected.
Result<Millis> parseDuration(std::string_view text);

/// Formats a duration in the same syntax, largest units first (`1h30m`, `20s`, `250ms`, `0s`).
std::string formatDuration(Millis duration);

}  // namespace relay
