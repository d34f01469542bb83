#include "runtime/egress_policy.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <memory>

#include "common/split.h"

namespace relay::runtime {
namespace {

Result<int> parseNumber(std::string_view text, int max, const char* what) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < 0 ||
      value > max) {
    return Error::invalid(std::string("expected ") + what + " from 0 to " + std::to_string(max) +
                          ", got \"" + std::string(text) + "\"");
  }
  return value;
}

Cidr hostCidr(const sockaddr* address) {
  Cidr cidr;
  if (address->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(address);
    std::memcpy(cidr.bytes.data(), &in->sin_addr, 4);
    cidr.prefix = 32;
  } else {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(address);
    std::memcpy(cidr.bytes.data(), &in6->sin6_addr, 16);
    cidr.v6 = true;
    cidr.prefix = 128;
  }
  return cidr;
}

}  // namespace

std::string Cidr::text() const {
  char buffer[INET6_ADDRSTRLEN] = {};
  ::inet_ntop(v6 ? AF_INET6 : AF_INET, bytes.data(), buffer, sizeof buffer);
  return std::string(buffer) + "/" + std::to_string(prefix);
}

Result<Cidr> parseCidr(std::string_view text) {
  const std::size_t slash = text.find('/');
  const std::string address(text.substr(0, slash));
  Cidr cidr;
  if (::inet_pton(AF_INET, address.c_str(), cidr.bytes.data()) == 1) {
    cidr.prefix = 32;
  } else if (::inet_pton(AF_INET6, address.c_str(), cidr.bytes.data()) == 1) {
    cidr.v6 = true;
    cidr.prefix = 128;
  } else {
    return Error::invalid(
        "expected an IPv4 or IPv6 address block such as 10.0.0.0/8 or "
        "2001:db8::/32, got \"" +
        std::string(text) + "\"");
  }
  if (slash != std::string_view::npos) {
    auto prefix = parseNumber(text.substr(slash + 1), cidr.prefix, "a prefix length");
    if (!prefix.ok())
      return Error::invalid(prefix.error().message + " in \"" + std::string(text) + "\"");
    cidr.prefix = *prefix;
  }
  const int total = cidr.v6 ? 128 : 32;
  for (int bit = cidr.prefix; bit < total; ++bit) {
    if ((cidr.bytes[static_cast<std::size_t>(bit / 8)] >> (7 - bit % 8)) & 1) {
      Cidr network = cidr;
      for (int clear = cidr.prefix; clear < total; ++clear) {
        network.bytes[static_cast<std::size_t>(clear / 8)] &=
            static_cast<std::uint8_t>(~(1u << (7 - clear % 8)));
      }
      return Error::invalid("\"" + std::string(text) + "\" has bits set past its /" +
                            std::to_string(cidr.prefix) + " prefix; write " + network.text());
    }
  }
  return cidr;
}

Result<PortRange> parsePortRange(std::string_view text) {
  const std::size_t dash = text.find('-');
  auto first = parseNumber(text.substr(0, dash), 65535, "a port");
  auto last =
      dash == std::string_view::npos ? first : parseNumber(text.substr(dash + 1), 65535, "a port");
  if (!first.ok() || !last.ok() || *first == 0 || *last < *first) {
    return Error::invalid("expected a port (1-65535) or a range such as \"8000-8080\", got \"" +
                          std::string(text) + "\"");
  }
  return PortRange{static_cast<std::uint16_t>(*first), static_cast<std::uint16_t>(*last)};
}

std::vector<Cidr> linkLocalBlocks() {
  return {*parseCidr("169.254.0.0/16"), *parseCidr("fe80::/10")};
}

std::vector<Cidr> hostAddresses() {
  ifaddrs* list = nullptr;
  std::vector<Cidr> found;
  if (::getifaddrs(&list) != 0) return found;
  const std::unique_ptr<ifaddrs, decltype(&::freeifaddrs)> owner(list, &::freeifaddrs);
  for (const ifaddrs* entry = list; entry != nullptr; entry = entry->ifa_next) {
    if (entry->ifa_addr == nullptr || (entry->ifa_flags & IFF_LOOPBACK) != 0) continue;
    const int family = entry->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    const Cidr cidr = hostCidr(entry->ifa_addr);
    if (std::find(found.begin(), found.end(), cidr) == found.end()) found.push_back(cidr);
  }
  return found;
}

std::string encodeEgressPolicy(const EgressPolicy& policy) {
  std::string text;
  const auto term = [&text](const std::string& value) {
    if (!text.empty()) text += ';';
    text += value;
  };
  for (const Cidr& cidr : policy.denied) term("deny " + cidr.text());
  for (const EgressAllow& allow : policy.allowed) {
    std::string value = "allow " + allow.to.text();
    for (std::size_t i = 0; i < allow.ports.size(); ++i) {
      value += i == 0 ? " " : ",";
      value += std::to_string(allow.ports[i].first) + "-" + std::to_string(allow.ports[i].last);
    }
    term(value);
  }
  if (policy.allow_list) term("only");
  return text;
}

Result<EgressPolicy> decodeEgressPolicy(std::string_view text) {
  EgressPolicy policy;
  if (text.empty()) return policy;
  for (const std::string_view term : split(text, ';')) {
    const std::vector<std::string_view> words = split(term, ' ');
    if (words.size() == 1 && words[0] == "only") {
      policy.allow_list = true;
      continue;
    }
    if (words.size() < 2 || words.size() > 3 || (words[0] != "deny" && words[0] != "allow") ||
        (words[0] == "deny" && words.size() != 2)) {
      return Error::invalid("malformed egress term \"" + std::string(term) + "\"");
    }
    auto cidr = parseCidr(words[1]);
    if (!cidr.ok()) return cidr.error();
    if (words[0] == "deny") {
      policy.denied.push_back(*cidr);
      continue;
    }
    EgressAllow allow{*cidr, {}};
    if (words.size() == 3) {
      for (const std::string_view range : split(words[2], ',')) {
        auto ports = parsePortRange(range);
        if (!ports.ok()) return ports.error();
        allow.ports.push_back(*ports);
      }
    }
    policy.allowed.push_back(std::move(allow));
  }
  return policy;
}

}  // namespace relay::runtime
