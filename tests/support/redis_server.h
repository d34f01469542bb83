#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "redis/connection.h"
#include "redis/endpoint.h"

namespace relay::testing {

/// How to start a test redis-server.
struct RedisServerOptions {
  /// Appended after the defaults, so they can override them:
  /// {"--requirepass", "s3cret"} or {"--user", "alice", "on", ">pw", "~*", "&*", "+@all"}.
  std::vector<std::string> extra_args;
  /// How long start() waits for the first PING answer before giving up.
  std::chrono::milliseconds ready_timeout = std::chrono::seconds(10);

  /// TLS on port() (the unix socket stays plain text, for the fixture's own probes).
  struct Tls {
    std::string cert_file;
    std::string key_file;
    std::string ca_file;        // clients' certificates are checked against it
    bool auth_clients = false;  // tls-auth-clients: a client certificate is required
  };
  std::optional<Tls> tls;

  /// A Redis Cluster node (cluster-enabled, its bus on a second free port) with this
  /// cluster-node-timeout; zero: not a cluster node.
  std::chrono::milliseconds cluster_node_timeout{0};

  /// A redis-sentinel instead of a server: monitors the master on 127.0.0.1:master_port as
  /// master_name with a quorum of 2 and short timeouts (a failover within a few seconds).
  struct Sentinel {
    std::string master_name = "relay-master";
    int master_port = 0;
    std::chrono::milliseconds down_after{1'000};
    std::chrono::milliseconds failover_timeout{3'000};
  };
  std::optional<Sentinel> sentinel;
};

/// A real `redis-server` child on a free loopback TCP port plus a unix socket in a fresh temp
/// dir, with persistence off and DEBUG allowed from local clients. The destructor SIGKILLs and
/// reaps the process and removes the temp dir, so a failing test leaves nothing behind (and
/// PR_SET_PDEATHSIG kills the server if the test process itself dies). Not thread-safe.
class RedisServer {
 public:
  /// Finds redis-server on PATH, makes the temp dir, picks a port (retrying when another
  /// process wins the race for it) and starts the server. Fails with a clear message when
  /// redis-server is missing or does not come up; the message includes the server's log.
  static Result<std::unique_ptr<RedisServer>> create(RedisServerOptions options = {});
  ~RedisServer();
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  /// Starts the server again on the same port, socket and data dir (after stop()/kill9()).
  /// Blocks until it answers PING.
  Status start();
  /// SIGTERM (a clean shutdown), waits up to 10s, then SIGKILL; always reaps the process.
  Status stop();
  /// SIGKILL and reap: a crash as seen by clients. No-op when not running.
  void kill9();

  bool running() const { return pid_ > 0; }
  /// The server's process id; -1 when not running.
  pid_t pid() const { return pid_; }
  int port() const { return port_; }
  /// The cluster bus port (cluster nodes only).
  int busPort() const { return bus_port_; }
  /// "127.0.0.1:PORT", a REDIS_URI value.
  std::string uri() const;
  const std::string& unixSocketPath() const { return socket_path_; }
  const std::string& dataDir() const { return dir_; }
  /// The TCP endpoint (no AUTH, db 0).
  redis::Endpoint endpoint() const;
  /// The unix socket endpoint (no AUTH, db 0).
  redis::Endpoint unixEndpoint() const;
  /// What the server wrote to stdout/stderr so far (all runs appended).
  std::string log() const;

  /// A new connection over TCP. Throws std::runtime_error when it cannot connect, which
  /// gtest reports as a failure of the running test (an ASSERT cannot return a value).
  std::unique_ptr<redis::Connection> connect(redis::ConnectionSettings settings = {}) const;

 private:
  RedisServer(std::string binary, std::string dir, RedisServerOptions options);
  Status launch();
  std::vector<std::string> arguments() const;
  Status waitUntilReady();

  std::string binary_;
  std::string dir_;
  std::string socket_path_;
  std::string log_path_;
  RedisServerOptions options_;
  int port_ = 0;
  int bus_port_ = 0;
  pid_t pid_ = -1;
};

/// A gtest fixture that gives every test its own fresh server (server()).
///
/// Cost: one redis-server start per test, roughly 10-30 ms on the 2-core CI box (dominated by
/// fork/exec and the server's startup), paid for complete isolation: no test sees another's
/// keys, scripts, config or a server another test killed. Override serverOptions() for AUTH
/// etc.
class RedisTest : public ::testing::Test {
 protected:
  void SetUp() override;
  /// Options for this fixture's server; the default starts a plain server.
  virtual RedisServerOptions serverOptions() const { return {}; }
  RedisServer& server() { return *server_; }

 private:
  std::unique_ptr<RedisServer> server_;
};

}  // namespace relay::testing
