#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace relay::runtime {

/// A block of IPv4 or IPv6 addresses: `10.0.0.0/8`, `2001:db8::/32`, `192.0.2.7` (one host).
struct Cidr {
  bool v6 = false;
  std::array<std::uint8_t, 16> bytes{};  // network order; IPv4 uses the first 4
  int prefix = 0;                        // bits that count: 0-32 (IPv4), 0-128 (IPv6)

  /// `a.b.c.d/n` or `x::y/n`, with the bits past the prefix cleared.
  std::string text() const;
  bool operator==(const Cidr&) const = default;
};

/// Parses `address/prefix` or a bare address (a /32 or /128); the bits past the prefix must
/// be zero (`10.0.0.1/8` is refused: write `10.0.0.0/8`). kInvalidArgument says what is wrong.
Result<Cidr> parseCidr(std::string_view text);

/// Inclusive TCP/UDP destination ports.
struct PortRange {
  std::uint16_t first = 1;
  std::uint16_t last = 65535;
  bool operator==(const PortRange&) const = default;
};

/// Parses `443` or `8000-8080` (1-65535, first <= last).
Result<PortRange> parsePortRange(std::string_view text);

/// One entry of an app's `egress` list (docs/apps.md): destinations in `to`, on `ports` (TCP
/// and UDP) or, without ports, on every port and protocol.
struct EgressAllow {
  Cidr to;
  std::vector<PortRange> ports;
  bool operator==(const EgressAllow&) const = default;
};

/// What a `network: true` sandbox may reach (docs/runtimes.md "network: true"): never the
/// `denied` blocks (link-local, the host's own addresses); with `allow_list`, only what
/// `allowed` names. The namespace's own loopback is always reachable.
struct EgressPolicy {
  std::vector<Cidr> denied;
  bool allow_list = false;
  std::vector<EgressAllow> allowed;
  bool operator==(const EgressPolicy&) const = default;
};

/// 169.254.0.0/16 and fe80::/10: link-local, where cloud metadata services answer and where a
/// host's wildcard listeners are reachable through its own link-local address.
std::vector<Cidr> linkLocalBlocks();

/// Every address of the host's interfaces but loopback, each as a /32 or /128 (getifaddrs).
/// Empty when they cannot be listed. Blocks on a netlink dump.
std::vector<Cidr> hostAddresses();

/// The policy as one argument (`relay-launcher --egress <text>`): `deny <cidr>` and `allow
/// <cidr>[ <ports>]` terms separated by `;`, then `only` when allow_list.
std::string encodeEgressPolicy(const EgressPolicy& policy);
/// The inverse; kInvalidArgument for anything encodeEgressPolicy() does not write.
Result<EgressPolicy> decodeEgressPolicy(std::string_view text);

}  // namespace relay::runtime
