#pragma once

#include <chrono>
#include <string_view>

#include "common/result.h"

namespace relay::pattern {

/// Parses the exact temporal operand syntax `now()`, `now()-5m`, `now()+10m`, `now()-1h30m`
/// (units h, m, s, ms, descending, each at most once; no spaces) into the signed offset the
/// cut-off adds to now. Anything else is an error whose message says what was expected: a
/// literal timestamp, `now`, `now-5m` and `now() - 5m` included.
Result<std::chrono::milliseconds> parseNowExpression(std::string_view text);

}  // namespace relay::pattern
