#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "support/redis_server.h"

namespace relay::testing {

/// One master, one replica and three redis-sentinel processes watching them (quorum 2, a
/// master is down after 1s): what `redis+sentinel://` endpoints are tested against. Every
/// process is a RedisServer, killed and reaped by the destructor.
class SentinelGroup {
 public:
  static constexpr const char* kMasterName = "relay-master";

  /// Starts the five processes and waits until the replica is in sync and every sentinel
  /// knows the replica and the two other sentinels (so a failover can happen).
  static Result<std::unique_ptr<SentinelGroup>> create(RedisServerOptions data_options = {});

  /// "redis+sentinel://[userinfo@]127.0.0.1:A,127.0.0.1:B,127.0.0.1:C/relay-master".
  std::string uri(const std::string& userinfo = "") const;
  /// The data server that is master now, per the first sentinel that answers.
  Result<RedisServer*> master();
  /// The data server that is not master().
  Result<RedisServer*> replica();
  /// Waits until the sentinels name a master other than `old_port` and it answers as master.
  /// Returns the new master.
  Result<RedisServer*> waitForFailover(int old_port, std::chrono::milliseconds timeout);
  RedisServer& sentinel(size_t i) { return *sentinels_.at(i); }

 private:
  SentinelGroup() = default;
  Result<int> masterPort();

  std::vector<std::unique_ptr<RedisServer>> data_;  // [0] starts as master, [1] as replica
  std::vector<std::unique_ptr<RedisServer>> sentinels_;
};

/// A Redis Cluster of three masters with one replica each, made by `redis-cli --cluster
/// create`, with a short cluster-node-timeout. Every node is a RedisServer.
class RedisCluster {
 public:
  static Result<std::unique_ptr<RedisCluster>> create(RedisServerOptions node_options = {});

  /// A REDIS_URI naming one node (the connection finds the others).
  std::string uri() const;
  /// The node that is master of `slot` now, and one of its replicas.
  Result<RedisServer*> masterOf(int slot);
  Result<RedisServer*> replicaOf(int slot);
  /// A master that does not serve `slot`.
  Result<RedisServer*> otherMaster(int slot);
  /// CLUSTER FAILOVER on the replica of `slot`'s master; waits until it serves the slot.
  /// Returns the new master.
  Result<RedisServer*> failover(int slot, std::chrono::milliseconds timeout);

  /// Starts moving `slot` from its master to the master `to` the way `redis-cli --cluster
  /// reshard` does: IMPORTING on `to`, MIGRATING on the owner. From now on the owner answers
  /// ASK for the slot's keys it no longer holds (new ones, and those moveKeys() moved).
  Status beginMigration(int slot, RedisServer& to);
  /// MIGRATEs every key of `slot` still on its owner to `to` (during a migration).
  Status moveKeys(int slot, RedisServer& to);
  /// Moves the remaining keys and gives `slot` to `to` on every master (CLUSTER SETSLOT NODE);
  /// waits until every node's CLUSTER SLOTS says so. From now on the old owner answers MOVED.
  Status finishMigration(int slot, RedisServer& to);
  std::vector<std::unique_ptr<RedisServer>>& nodes() { return nodes_; }

 private:
  RedisCluster() = default;
  Status waitUntilHealthy(std::chrono::milliseconds timeout);
  // The port of `slot`'s master as `node` sees it (CLUSTER SLOTS); 0 when it names none.
  int ownerSeenBy(RedisServer& node, int slot);

  std::vector<std::unique_ptr<RedisServer>> nodes_;
};

}  // namespace relay::testing
