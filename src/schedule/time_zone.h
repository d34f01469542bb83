#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <date/date.h>

#include "common/result.h"

namespace relay::schedule {

/// An IANA timezone from the system zoneinfo (via the date library); cheap to copy, immutable,
/// safe to share between threads. The only place that talks to the date library's tz part.
class TimeZone {
 public:
  /// "UTC", "Europe/Berlin"... An unknown name -> kInvalidArgument `unknown timezone "X"`; an
  /// unreadable zoneinfo database -> kUnavailable. Reads /usr/share/zoneinfo (package tzdata).
  static Result<TimeZone> load(std::string_view iana_name);

  const std::string& name() const;

  /// The UTC offset (east positive) in effect at `instant`.
  std::chrono::seconds offsetAt(date::sys_seconds instant) const;

  /// The wall-clock reading at `instant`.
  date::local_seconds toLocal(date::sys_seconds instant) const;

  /// The earliest instant at which the wall clock reads `local`: nullopt when `local` falls in
  /// a gap (clocks jumped over it), the first of the two when it occurs twice.
  std::optional<date::sys_seconds> firstInstantOf(date::local_seconds local) const;

 private:
  struct Data;
  explicit TimeZone(std::shared_ptr<const Data> data) : data_(std::move(data)) {}

  std::shared_ptr<const Data> data_;
};

}  // namespace relay::schedule
