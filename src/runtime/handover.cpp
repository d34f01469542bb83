#include "runtime/handover.h"

#include "common/whole_number.h"

namespace relay::runtime {
namespace {

constexpr std::string_view kMagic = "RELAY-HANDOVER 1 ";

Error bad(std::string_view what) {
  return Error::invalid(std::string("malformed hand-over: ") + std::string(what));
}

// Reads a decimal number followed by `end` (or the end of `text` when end is '\0').
bool number(std::string_view& text, char end, std::size_t& value) {
  const std::size_t stop = end == '\0' ? text.size() : text.find(end);
  if (stop == std::string_view::npos || !parseWholeNumber(text.substr(0, stop), value)) {
    return false;
  }
  text.remove_prefix(end == '\0' ? stop : stop + 1);
  return true;
}

}  // namespace

std::string encodeHandover(const Handover& handover) {
  std::string payload;
  for (const auto* strings : {&handover.argv, &handover.env}) {
    for (const std::string& s : *strings) {
      payload += s;
      payload.push_back('\0');
    }
  }
  return std::string(kMagic) + std::to_string(handover.argv.size()) + " " +
         std::to_string(handover.env.size()) + " " + std::to_string(payload.size()) + "\n" +
         payload;
}

Result<HandoverHeader> decodeHandoverHeader(std::string_view line) {
  if (line.substr(0, kMagic.size()) != kMagic) return bad("no RELAY-HANDOVER 1 header");
  line.remove_prefix(kMagic.size());
  HandoverHeader header;
  if (!number(line, ' ', header.argc) || !number(line, ' ', header.envc) ||
      !number(line, '\0', header.bytes)) {
    return bad("expected <argc> <envc> <bytes>");
  }
  if (header.argc == 0) return bad("empty argv");
  if (header.bytes > kMaxHandoverPayload) return bad("payload too large");
  return header;
}

Result<Handover> decodeHandoverPayload(const HandoverHeader& header, std::string_view payload) {
  if (payload.size() != header.bytes) return bad("payload size differs from the header");
  Handover handover;
  while (!payload.empty()) {
    const std::size_t end = payload.find('\0');
    if (end == std::string_view::npos) return bad("unterminated string");
    auto& into = handover.argv.size() < header.argc ? handover.argv : handover.env;
    into.emplace_back(payload.substr(0, end));
    payload.remove_prefix(end + 1);
  }
  if (handover.argv.size() != header.argc || handover.env.size() != header.envc) {
    return bad("string counts differ from the header");
  }
  return handover;
}

}  // namespace relay::runtime
