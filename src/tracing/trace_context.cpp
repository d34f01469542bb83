#include "tracing/trace_context.h"

#include <algorithm>

namespace relay::tracing {
namespace {

constexpr std::size_t kVersion00Length = 55;  // 2 + 1 + 32 + 1 + 16 + 1 + 2
constexpr std::size_t kMaxTracestateBytes = 512;
constexpr std::size_t kMaxTracestateMembers = 32;

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;  // upper case is invalid in traceparent
}

// Decodes `text` (2 * N lowercase hex digits) into `out`; false on any other character.
template <std::size_t N>
bool readHex(std::string_view text, std::array<std::uint8_t, N>& out) {
  for (std::size_t i = 0; i < N; ++i) {
    const int high = hexValue(text[2 * i]);
    const int low = hexValue(text[2 * i + 1]);
    if (high < 0 || low < 0) return false;
    out[i] = static_cast<std::uint8_t>(high * 16 + low);
  }
  return true;
}

template <std::size_t N>
std::string toHex(const std::array<std::uint8_t, N>& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * N);
  for (const std::uint8_t byte : bytes) {
    out += kDigits[byte >> 4];
    out += kDigits[byte & 15];
  }
  return out;
}

template <std::size_t N>
bool allZero(const std::array<std::uint8_t, N>& bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](std::uint8_t b) { return b == 0; });
}

Error invalid(std::string_view text, std::string_view why) {
  return Error::invalid("invalid traceparent \"" + std::string(text.substr(0, 80)) +
                        "\": " + std::string(why) +
                        " (expected 00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>)");
}

bool keyChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '*' ||
         c == '/';
}

// One `key=value` list member (already trimmed of surrounding spaces and tabs).
Status checkMember(std::string_view member) {
  const std::size_t equals = member.find('=');
  if (equals == std::string_view::npos || equals == 0) {
    return Error::invalid("tracestate member \"" + std::string(member) + "\" is not key=value");
  }
  const std::string_view key = member.substr(0, equals);
  const std::string_view value = member.substr(equals + 1);
  const std::size_t at = key.find('@');
  const std::string_view tenant = key.substr(0, at);
  const std::string_view vendor = at == std::string_view::npos ? "" : key.substr(at + 1);
  const auto valid_key_part = [](std::string_view part, std::size_t max) {
    return !part.empty() && part.size() <= max &&
           ((part[0] >= 'a' && part[0] <= 'z') || (part[0] >= '0' && part[0] <= '9')) &&
           std::all_of(part.begin(), part.end(), keyChar);
  };
  if (!valid_key_part(tenant, at == std::string_view::npos ? 256 : 241) ||
      (at != std::string_view::npos && !valid_key_part(vendor, 14))) {
    return Error::invalid("tracestate key \"" + std::string(key) +
                          "\" is invalid (lowercase letters, digits, _-*/, optionally @vendor)");
  }
  if (value.empty() || value.size() > 256 || value.back() == ' ' ||
      !std::all_of(value.begin(), value.end(),
                   [](char c) { return c >= 0x20 && c <= 0x7e && c != ',' && c != '='; })) {
    return Error::invalid("tracestate value of \"" + std::string(key) +
                          "\" is invalid (1-256 printable ASCII characters, no ',' or '=')");
  }
  return {};
}

}  // namespace

std::string TraceContext::traceIdHex() const { return toHex(trace_id); }

std::string TraceContext::parentIdHex() const { return toHex(parent_id); }

std::string TraceContext::traceparent() const {
  static constexpr char kDigits[] = "0123456789abcdef";
  return "00-" + traceIdHex() + "-" + parentIdHex() + "-" + kDigits[flags >> 4] +
         kDigits[flags & 15];
}

Result<TraceContext> parseTraceparent(std::string_view text) {
  if (text.size() < kVersion00Length) return invalid(text, "too short");
  if (text[2] != '-' || text[35] != '-' || text[52] != '-') {
    return invalid(text, "fields must be separated by '-'");
  }
  std::array<std::uint8_t, 1> version{};
  if (!readHex(text.substr(0, 2), version)) return invalid(text, "version is not 2 lowercase hex");
  if (version[0] == 0xff) return invalid(text, "version ff is forbidden");
  if (version[0] == 0 && text.size() != kVersion00Length) {
    return invalid(text, "version 00 is exactly 55 characters");
  }
  if (version[0] != 0 && text.size() > kVersion00Length && text[kVersion00Length] != '-') {
    return invalid(text, "data after the flags must start with '-'");
  }
  TraceContext context;
  if (!readHex(text.substr(3, 32), context.trace_id)) {
    return invalid(text, "trace id is not 32 lowercase hex digits");
  }
  if (!readHex(text.substr(36, 16), context.parent_id)) {
    return invalid(text, "parent id is not 16 lowercase hex digits");
  }
  std::array<std::uint8_t, 1> flags{};
  if (!readHex(text.substr(53, 2), flags)) return invalid(text, "flags are not 2 lowercase hex");
  if (allZero(context.trace_id)) return invalid(text, "the trace id is all zeros");
  if (allZero(context.parent_id)) return invalid(text, "the parent id is all zeros");
  context.flags = flags[0];
  return context;
}

Status checkTracestate(std::string_view text) {
  if (text.size() > kMaxTracestateBytes) {
    return Error::invalid("tracestate is " + std::to_string(text.size()) + " bytes, over " +
                          std::to_string(kMaxTracestateBytes));
  }
  std::size_t members = 0;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    std::string_view member = text.substr(start, comma - start);
    while (!member.empty() && (member.front() == ' ' || member.front() == '\t')) {
      member.remove_prefix(1);
    }
    while (!member.empty() && (member.back() == ' ' || member.back() == '\t')) {
      member.remove_suffix(1);
    }
    if (!member.empty()) {
      if (++members > kMaxTracestateMembers) {
        return Error::invalid("tracestate has more than 32 members");
      }
      if (auto checked = checkMember(member); !checked.ok()) return checked;
    }
    start = comma + 1;
  }
  return {};
}

}  // namespace relay::tracing
