#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"

namespace relay {

/// A UTC instant with nanosecond precision over years 0000-9999 (wider than a
/// nanosecond time_point can hold), ordered as instants.
struct Instant {
  std::int64_t seconds = 0;  // since 1970-01-01T00:00:00Z
  std::int32_t nanos = 0;    // 0..999'999'999

  auto operator<=>(const Instant&) const = default;

  static Instant fromWallTime(WallTime time);
};

/// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` (`T`/`Z` in either case) into the instant
/// it denotes. Anything else — no offset, a date alone, an impossible date, a leap second
/// `:60`, trailing bytes — is not a timestamp and yields nullopt. Pure and allocation-free.
std::optional<Instant> parseRfc3339(std::string_view text);

/// Formats as `YYYY-MM-DDTHH:MM:SSZ` (whole seconds, UTC).
std::string formatRfc3339(WallTime time);

/// Formats as `YYYY-MM-DDTHH:MM:SS.mmmZ` (milliseconds, UTC).
std::string formatRfc3339Millis(WallTime time);

/// Formats an instant of any year 0000-9999 as `YYYY-MM-DDTHH:MM:SSZ` (whole seconds, UTC).
std::string formatInstant(Instant instant);

}  // namespace relay
