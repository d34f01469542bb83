#include "catalog/message_decoder.h"

#include "common/size.h"

namespace relay::catalog {
namespace {

constexpr std::size_t kSummaryBytes = 256;

// The first bytes of an oversized payload, cut at a UTF-8 boundary, plus its size.
std::string summary(const std::string& raw) {
  std::size_t cut = std::min(raw.size(), kSummaryBytes);
  while (cut > 0 && cut < raw.size() && (static_cast<unsigned char>(raw[cut]) & 0xC0) == 0x80) {
    --cut;
  }
  return raw.substr(0, cut) + "... (" + std::to_string(raw.size()) + " bytes, truncated)";
}

}  // namespace

std::string EventRejection::reason() const {
  if (oversized) return "oversized: " + message;
  return "malformed: " + (json_syntax
                              ? "invalid JSON at byte " + std::to_string(offset) + ": " + message
                              : message);
}

Result<event::Event, EventRejection> checkEventValue(std::string raw, std::size_t max_event_bytes) {
  if (raw.size() > max_event_bytes) {
    return EventRejection{true, false, max_event_bytes,
                          "event is " + std::to_string(raw.size()) +
                              " bytes, over MAX_EVENT_BYTES " + formatSize(max_event_bytes)};
  }
  auto event = event::decodeLocated(std::move(raw));
  if (!event.ok()) {
    const event::DecodeError& error = event.error();
    return EventRejection{false, error.json_syntax, error.offset, error.message};
  }
  return std::move(event).value();
}

DecodedMessage decodeMessage(const invocation::Message& entry, std::size_t max_event_bytes) {
  DecodedMessage decoded;
  const std::string* raw = entry.find("event");
  if (raw == nullptr) {
    decoded.reason = "malformed: the message has no event field";
    return decoded;
  }
  auto event = checkEventValue(*raw, max_event_bytes);
  if (!event.ok()) {
    decoded.kind = event.error().oversized ? DecodedMessage::Kind::kOversized
                                           : DecodedMessage::Kind::kMalformed;
    decoded.reason = event.error().reason();
    decoded.dlq_event = event.error().oversized ? summary(*raw) : *raw;
    return decoded;
  }
  decoded.dlq_event = *raw;
  decoded.kind = DecodedMessage::Kind::kEvent;
  decoded.event.emplace(std::move(event).value());
  return decoded;
}

}  // namespace relay::catalog
