#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "event/event.h"
#include "stream/stream_entry.h"

namespace relay::stream {

/// Cap on the raw `event` value (MAX_EVENT_BYTES default) and its hard ceiling.
inline constexpr std::size_t kDefaultMaxEventBytes = 256 * 1024;
inline constexpr std::size_t kMaxEventBytesCeiling = 16 * 1024 * 1024;

/// What an external-event message turned out to be, before any matching.
struct DecodedMessage {
  enum class Kind { kEvent, kMalformed, kOversized };
  Kind kind = Kind::kMalformed;
  std::optional<event::Event> event;  // kEvent
  std::string reason;                 // kMalformed / kOversized: why, for the DLQ entry
  std::string dlq_event;              // what the DLQ entry's `event` field records
};

/// Decodes the `event` field: missing, not valid UTF-8 JSON, not an object or nested deeper
/// than 64 is malformed; longer than `max_event_bytes` is oversized (the DLQ then records a
/// short summary instead of the payload). Never throws.
DecodedMessage decodeMessage(const StreamEntry& entry, std::size_t max_event_bytes);

}  // namespace relay::stream
