#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "common/result.h"
#include "event/event.h"
#include "invocation/message.h"

namespace relay::catalog {

/// Cap on the raw `event` value (MAX_EVENT_BYTES default) and its hard ceiling.
inline constexpr std::size_t kDefaultMaxEventBytes = 256 * 1024;
inline constexpr std::size_t kMaxEventBytesCeiling = 16 * 1024 * 1024;

/// Why an `event` value can never run: too large, or not a UTF-8 JSON object at most 64 deep.
struct EventRejection {
  bool oversized = false;
  bool json_syntax = false;  // not RFC 8259 JSON at all (rather than not an event)
  std::size_t offset = 0;    // the offending byte (MAX_EVENT_BYTES itself when oversized)
  std::string message;       // what was wrong, without the offset

  /// The DLQ reason: `oversized: event is N bytes, over MAX_EVENT_BYTES 256KiB` or
  /// `malformed: invalid JSON at byte N: ...`.
  std::string reason() const;
};

/// The checks the consumer applies to an `event` value before any matching (docs/pipeline.md
/// "One message", step 1), in one place for the consumer and `relay publish`: longer than
/// `max_event_bytes` is oversized; otherwise event::decode() decides.
Result<event::Event, EventRejection> checkEventValue(std::string raw, std::size_t max_event_bytes);

/// What an external-event message turned out to be, before any matching.
struct DecodedMessage {
  enum class Kind { kEvent, kMalformed, kOversized };
  Kind kind = Kind::kMalformed;
  std::optional<event::Event> event;  // kEvent
  std::string reason;                 // kMalformed / kOversized: why, for the DLQ entry
  std::string dlq_event;              // what the DLQ entry's `event` field records
};

/// Decodes the `event` field with checkEventValue(); a missing field is malformed too. An
/// oversized payload's DLQ entry records a short summary instead of the payload. Never throws.
DecodedMessage decodeMessage(const invocation::Message& entry, std::size_t max_event_bytes);

}  // namespace relay::catalog
