#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace relay::http {

/// Where an HTTP endpoint listens or is asked (RELAY_HTTP_ADDR): a host and a TCP port.
struct Address {
  std::string host;  // an IPv4 or IPv6 literal (without brackets) or a host name
  int port = 0;      // 0: any free port (tests read the bound one back)

  /// `host:port`, with brackets around an IPv6 literal (`[::1]:9464`).
  std::string toString() const;
};

/// Parses `host:port` or `[ipv6]:port` (port 0..65535). Rejects an empty host, a missing or
/// non-numeric port and an unbracketed IPv6 literal with a message saying what was expected.
Result<Address> parseAddress(std::string_view text);

}  // namespace relay::http
