#include "http/address.h"

#include "common/whole_number.h"

namespace relay::http {
namespace {

Error bad(std::string_view text, std::string_view why) {
  return Error::invalid("invalid address \"" + std::string(text) + "\": " + std::string(why) +
                        " (expected host:port, e.g. 127.0.0.1:9464 or [::1]:9464)");
}

}  // namespace

std::string Address::toString() const {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

Result<Address> parseAddress(std::string_view text) {
  Address address;
  std::string_view port;
  if (!text.empty() && text.front() == '[') {
    const std::size_t close = text.find(']');
    if (close == std::string_view::npos) return bad(text, "unclosed '['");
    address.host = std::string(text.substr(1, close - 1));
    if (address.host.find(':') == std::string::npos) {
      return bad(text, "brackets are only for IPv6 literals");
    }
    if (close + 1 >= text.size() || text[close + 1] != ':') return bad(text, "missing :port");
    port = text.substr(close + 2);
  } else {
    const std::size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return bad(text, "missing :port");
    address.host = std::string(text.substr(0, colon));
    if (address.host.find(':') != std::string::npos) {
      return bad(text, "an IPv6 literal needs brackets");
    }
    port = text.substr(colon + 1);
  }
  if (address.host.empty()) return bad(text, "empty host");
  for (char c : address.host) {
    if (static_cast<unsigned char>(c) <= ' ' || c == '/' || c == '[' || c == ']' || c == 0x7f) {
      return bad(text, "the host has a character hosts never have");
    }
  }
  int number = -1;
  if (!parseWholeNumber(port, number) || number < 0 || number > 65535) {
    return bad(text, "the port must be a number from 0 to 65535");
  }
  address.port = number;
  return address;
}

}  // namespace relay::http
