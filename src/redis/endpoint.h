#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace relay::redis {

/// Where a Redis server is and how to log in: parsed from REDIS_URI (relay.md section 1).
struct Endpoint {
  enum class Transport { kTcp, kUnix };

  Transport transport = Transport::kTcp;
  std::string host = "127.0.0.1";  // kTcp only; an IPv6 address without brackets
  int port = 6379;                 // kTcp only
  std::string unix_path;           // kUnix only; absolute
  std::string username;            // empty: no ACL user (AUTH <password> when a password is set)
  std::string password;            // empty: no AUTH
  int db = 0;                      // SELECTed after connecting when not 0

  bool hasAuth() const { return !username.empty() || !password.empty(); }

  /// A printable form for logs and messages that never contains the password (shown as ***),
  /// e.g. "127.0.0.1:6379", "redis://app:***@[::1]:6380/2", "unix:///run/redis.sock".
  std::string describe() const;

  bool operator==(const Endpoint&) const = default;
};

/// Parses `host:port`, `[v6addr]:port`, `redis://[user[:password]@]host:port[/db]` or
/// `unix:///path/to.sock`. User and password may be percent-encoded (%40 for '@'). A user
/// without a password means `AUTH user ""` (an ACL user with nopass). Rejects an empty host,
/// a missing or out-of-range port, an unbracketed IPv6 address, a bad db number, a relative
/// socket path and unknown schemes (rediss:// included) with a message naming the bad part;
/// messages never contain the password.
relay::Result<Endpoint> parseRedisUri(std::string_view uri);

}  // namespace relay::redis
