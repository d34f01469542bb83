#pragma once

#include <chrono>
#include <optional>
#include <string_view>

#include <date/date.h>

#include "common/result.h"

namespace relay::schedule {

/// A POSIX TZ rule such as `CET-1CEST,M3.5.0,M10.5.0/3`, with the RFC 8536 extensions (quoted
/// names `<+0545>`, transition hours -167..167). A TZif file ends with one: it gives the zone's
/// offsets after the last transition its table lists (2037 in Debian's files), which the date
/// library does not read. Pure; a cheap value.
class PosixTz {
 public:
  /// Rejects anything but `std offset [dst [offset] ,start[/time],end[/time]]`; a DST name
  /// without rules is rejected too (POSIX leaves its meaning to the implementation).
  static Result<PosixTz> parse(std::string_view text);

  /// The UTC offset (east positive) in effect at `instant`.
  std::chrono::seconds offsetAt(date::sys_seconds instant) const;

  /// Whether the rule switches between standard time and daylight saving time at all.
  bool hasDst() const { return dst_.has_value(); }

 private:
  /// When in a year a switch happens, in the wall-clock time in effect just before it.
  struct Transition {
    enum class Kind { kJulianNoLeap, kZeroBasedDay, kMonthWeekDay };
    Kind kind = Kind::kMonthWeekDay;
    unsigned day = 0;      // Jn: 1-365, n: 0-365
    unsigned month = 1;    // Mm.w.d
    unsigned week = 1;     // 1-5, 5 = last
    unsigned weekday = 0;  // 0 = Sunday
    std::chrono::seconds time = std::chrono::hours(2);

    date::local_seconds in(date::year year) const;
  };

  struct Dst {
    std::chrono::seconds offset{};  // UTC offset while DST is in effect
    Transition start;
    Transition end;
  };

  std::chrono::seconds std_offset_{};  // UTC offset of standard time
  std::optional<Dst> dst_;
};

}  // namespace relay::schedule
