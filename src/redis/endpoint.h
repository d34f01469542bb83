#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace relay::redis {

class Topology;

/// One server address: a TCP host and port, or a unix socket path.
struct Address {
  std::string host;       // empty for a unix socket; an IPv6 address without brackets
  int port = 0;           // TCP only
  std::string unix_path;  // unix socket only; absolute

  bool isUnix() const { return !unix_path.empty(); }
  /// "host:port", "[v6]:port" or "unix:///path".
  std::string describe() const;
  bool operator==(const Address&) const = default;
};

/// TLS files and names of a `rediss://` endpoint (REDIS_TLS_* in docs/operations.md).
struct TlsSettings {
  std::string ca_file;      // PEM bundle the server's certificate must chain to; empty: system CAs
  std::string cert_file;    // client certificate (PEM), with key_file; for tls-auth-clients
  std::string key_file;     // client private key (PEM)
  std::string server_name;  // SNI and the name checked in the certificate; empty: the host
  bool operator==(const TlsSettings&) const = default;
};

/// Where a Redis deployment is and how to log in: parsed from REDIS_URI (docs/operations.md).
///
/// Direct endpoints name one server (which may be one node of a Redis Cluster: the connection
/// finds the node serving `slot_key`); sentinel endpoints name the sentinels and the master
/// group, and the connection asks them where the master is.
struct Endpoint {
  enum class Transport { kTcp, kUnix };

  Transport transport = Transport::kTcp;
  std::string host = "127.0.0.1";  // kTcp only; an IPv6 address without brackets
  int port = 6379;                 // kTcp only
  std::string unix_path;           // kUnix only; absolute
  std::string username;            // empty: no ACL user (AUTH <password> when a password is set)
  std::string password;            // empty: no AUTH
  int db = 0;                      // SELECTed after connecting when not 0
  bool tls = false;                // rediss:// (also to the sentinels of rediss+sentinel://)
  TlsSettings tls_settings;        // used when tls
  std::vector<Address> sentinels;  // redis+sentinel:// only: tried in order
  std::string master_name;         // redis+sentinel:// only: the sentinels' master group
  /// Redis Cluster: connect to the master serving this key's hash slot, and refuse a key
  /// without a hash tag (keys derived from it would spread over slots). Ignored elsewhere.
  std::string slot_key;
  /// Shared by every copy of this endpoint: the master last seen and the reconnect and
  /// failover counts. Null: connections share nothing (tests that build an Endpoint by hand).
  std::shared_ptr<Topology> topology;

  bool hasAuth() const { return !username.empty() || !password.empty(); }
  bool isSentinel() const { return !sentinels.empty(); }
  /// The directly named server (host:port or the unix socket).
  Address address() const;

  /// A printable form for logs and messages that never contains the password (shown as ***),
  /// e.g. "127.0.0.1:6379", "rediss://app:***@[::1]:6380/2", "unix:///run/redis.sock",
  /// "redis+sentinel://s1:26379,s2:26379/mymaster".
  std::string describe() const;

  /// Same place and login; the shared topology is not compared.
  bool operator==(const Endpoint& other) const;
};

/// Parses REDIS_URI: `host:port`, `[v6addr]:port`, `redis://[user[:password]@]host[:port][/db]`,
/// `rediss://...` (TLS), `unix:///path/to.sock[?user=U&password=P&db=N]` and
/// `redis+sentinel://[user[:password]@]host1[:port],host2[:port]/MASTER_NAME[/db]` (also
/// `rediss+sentinel://`). The port defaults to 6379 (26379 for sentinels). User and password
/// may be percent-encoded (%40 for '@'). A user without a password means `AUTH user ""`.
/// Rejects malformed input with a message naming the bad part; messages never contain the
/// password. The result carries a fresh shared Topology.
relay::Result<Endpoint> parseRedisUri(std::string_view uri);

}  // namespace relay::redis
