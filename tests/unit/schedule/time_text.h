#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "common/clock.h"
#include "common/rfc3339.h"

namespace relay::schedule::testing {

/// The instant an RFC 3339 literal denotes; a malformed literal fails the calling test.
inline WallTime at(std::string_view rfc3339) {
  const auto instant = parseRfc3339(rfc3339);
  EXPECT_TRUE(instant.has_value()) << "bad test literal " << rfc3339;
  if (!instant) return WallTime{};
  return WallTime{std::chrono::seconds(instant->seconds) +
                  std::chrono::nanoseconds(instant->nanos)};
}

/// A fire time as text for readable failures: RFC 3339 UTC with milliseconds, or "none".
inline std::string show(std::optional<WallTime> time) {
  return time ? formatRfc3339Millis(*time) : std::string("none");
}

}  // namespace relay::schedule::testing
