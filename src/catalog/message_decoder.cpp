#include "catalog/message_decoder.h"

#include "common/quote_json.h"
#include "common/size.h"

namespace relay::catalog {
namespace {

constexpr std::size_t kSummaryBytes = 256;

// The first bytes of an oversized payload of `size` bytes, cut at a UTF-8 boundary, plus its
// size; `kept` holds at least them (all of it, or what the read kept).
std::string summary(std::string_view kept, std::uint64_t size) {
  std::size_t cut = std::min(kept.size(), kSummaryBytes);
  while (cut > 0 && cut < kept.size() && (static_cast<unsigned char>(kept[cut]) & 0xC0) == 0x80) {
    --cut;
  }
  return std::string(kept.substr(0, cut)) + "... (" + std::to_string(size) + " bytes, truncated)";
}

// What the DLQ records of a message without `event`: its fields, so nothing of it is lost, as
// a JSON object of strings (`{"evnt":"{...}","source":"x"}`; invalid UTF-8 kept as is), at
// most max_event_bytes of it (then cut, ending with the count of what was left out).
std::string fieldsRecord(const invocation::Message& entry, std::size_t max_event_bytes) {
  std::string record = "{";
  std::size_t shown = 0;
  for (const auto& [name, value] : entry.fields) {
    std::string member = (shown == 0 ? "" : ",") + quoteJson(name) + ":" + quoteJson(value);
    if (record.size() + member.size() + 1 > max_event_bytes) {
      return record + "}... (" + std::to_string(entry.fields.size()) + " fields, " +
             std::to_string(entry.fields.size() - shown) + " left out)";
    }
    record += member;
    ++shown;
  }
  return record + "}";
}

// Why a message the read had to cut is oversized (docs/operations.md "Memory"), or "".
std::string cutReason(const invocation::Message& entry, std::size_t max_event_bytes) {
  for (const auto& [name, size] : entry.cut) {
    if (name == "event") {
      return "oversized: event is " + std::to_string(size) + " bytes, over MAX_EVENT_BYTES " +
             formatSize(max_event_bytes);
    }
  }
  if (entry.items_when_dropped > 0) {
    return "oversized: the message has " + std::to_string(entry.items_when_dropped / 2) +
           " fields, over " + std::to_string(invocation::kMaxMessageItems / 2);
  }
  if (!entry.cut.empty()) {
    return "oversized: field \"" + entry.cut.front().first + "\" is " +
           std::to_string(entry.cut.front().second) +
           " bytes, over what a message may hold (MAX_EVENT_BYTES " + formatSize(max_event_bytes) +
           " a value, twice that in all)";
  }
  return {};
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
  if (std::string reason = cutReason(entry, max_event_bytes); !reason.empty()) {
    decoded.kind = DecodedMessage::Kind::kOversized;
    decoded.reason = std::move(reason);
    if (raw != nullptr) {
      std::uint64_t size = raw->size();
      for (const auto& [name, true_size] : entry.cut) {
        if (name == "event") size = true_size;
      }
      decoded.dlq_event = size > raw->size() || size > max_event_bytes ? summary(*raw, size) : *raw;
    }
    return decoded;
  }
  if (raw == nullptr) {
    decoded.reason = "malformed: the message has no event field";
    decoded.dlq_event = fieldsRecord(entry, max_event_bytes);
    return decoded;
  }
  auto event = checkEventValue(*raw, max_event_bytes);
  if (!event.ok()) {
    decoded.kind = event.error().oversized ? DecodedMessage::Kind::kOversized
                                           : DecodedMessage::Kind::kMalformed;
    decoded.reason = event.error().reason();
    decoded.dlq_event = event.error().oversized ? summary(*raw, raw->size()) : *raw;
    return decoded;
  }
  decoded.dlq_event = *raw;
  decoded.kind = DecodedMessage::Kind::kEvent;
  decoded.event.emplace(std::move(event).value());
  return decoded;
}

}  // namespace relay::catalog
