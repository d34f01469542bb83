#include "stream/message_decoder.h"

#include "common/size.h"

namespace relay::stream {
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

DecodedMessage decodeMessage(const StreamEntry& entry, std::size_t max_event_bytes) {
  DecodedMessage decoded;
  const std::string* raw = entry.find("event");
  if (raw == nullptr) {
    decoded.reason = "malformed: the message has no event field";
    return decoded;
  }
  if (raw->size() > max_event_bytes) {
    decoded.kind = DecodedMessage::Kind::kOversized;
    decoded.reason = "oversized: event is " + std::to_string(raw->size()) +
                     " bytes, over MAX_EVENT_BYTES " + formatSize(max_event_bytes);
    decoded.dlq_event = summary(*raw);
    return decoded;
  }
  decoded.dlq_event = *raw;
  auto event = event::decode(*raw);
  if (!event.ok()) {
    decoded.reason = "malformed: " + event.error().message;
    return decoded;
  }
  decoded.kind = DecodedMessage::Kind::kEvent;
  decoded.event.emplace(std::move(event).value());
  return decoded;
}

}  // namespace relay::stream
