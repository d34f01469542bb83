#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace relay::tracing {

/// A W3C Trace Context (https://www.w3.org/TR/trace-context/): the `traceparent` a producer
/// puts next to `event` in a stream entry, and its optional `tracestate`.
struct TraceContext {
  std::array<std::uint8_t, 16> trace_id{};
  std::array<std::uint8_t, 8> parent_id{};  // the span the next span is a child of
  std::uint8_t flags = 0;                   // bit 0: sampled
  std::string tracestate;                   // verbatim; empty when none

  bool sampled() const { return (flags & 1u) != 0; }
  /// 32 lowercase hex digits.
  std::string traceIdHex() const;
  /// 16 lowercase hex digits.
  std::string parentIdHex() const;
  /// `00-<trace-id>-<parent-id>-<flags>`: what a child process gets as TRACEPARENT.
  std::string traceparent() const;
};

/// Parses a `traceparent` header value. Version 00 is exactly `00-` 32 hex, `-` 16 hex, `-`
/// 2 hex, lowercase; a later version may append `-...` (ignored); `ff`, an all-zero trace or
/// parent id, upper case or any other shape is invalid (kInvalidArgument saying what).
Result<TraceContext> parseTraceparent(std::string_view text);

/// Checks a `tracestate` value: at most 32 comma-separated `key=value` members, 512 bytes in
/// all; keys `[a-z0-9][a-z0-9_*/-]*` with an optional `@vendor`, values printable ASCII
/// without `,` or `=`. Empty is valid (no state).
Status checkTracestate(std::string_view text);

}  // namespace relay::tracing
