#pragma once

#include <chrono>

#include "common/rfc3339.h"
#include "event/event.h"
#include "pattern/pattern.h"

namespace relay::pattern {

/// `now + offset` as an instant (the cut-off of a temporal comparison).
Instant cutoff(Instant now, std::chrono::milliseconds offset);

/// Whether a scalar event value (never an array) equals a bare literal: same JSON type and
/// value; numbers compare as doubles, so 1 equals 1.0.
bool literalHolds(const Literal& literal, const event::Value& value);

/// Whether a comparison holds for a scalar event value: numeric thresholds need a number,
/// temporal cut-offs an RFC 3339 string, compared as instants.
bool comparisonHolds(const Comparison& comparison, const event::Value& value, Instant now);

}  // namespace relay::pattern
