#pragma once

#include <chrono>
#include <optional>
#include <string_view>

namespace relay::invocation {

/// docs/runtimes.md "Retry-after": a handler that exits with EX_TEMPFAIL asks to be run again
/// later instead of failing, after the delay of the last output line `retry-after: <delay>`.
inline constexpr int kRetryAfterExitCode = 75;

/// The delay `line` (one output line without the handler's prefix) asks for: `retry-after:`
/// (any case, spaces around the value allowed) then a duration (`30s`, `1m30s`, `500ms`) or a
/// whole number of seconds (`30`, as in HTTP). Nullopt when the line is no such request or its
/// delay is not a valid one.
std::optional<std::chrono::milliseconds> parseRetryAfter(std::string_view line);

}  // namespace relay::invocation
