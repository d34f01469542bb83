#include "support/redis_topologies.h"

#include <cstdlib>
#include <thread>

namespace relay::testing {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

constexpr milliseconds kPoll{50};
constexpr milliseconds kSetupTimeout{30'000};

// Replicas sync at once instead of after the 5 s a diskless sync waits for more replicas.
void syncReplicasAtOnce(RedisServerOptions& options) {
  options.extra_args.insert(options.extra_args.begin(), {"--repl-diskless-sync-delay", "0"});
}

// One command over the server's plain unix socket (TLS and ACLs do not apply there).
Result<redis::Reply> ask(const RedisServer& server, std::vector<std::string> command) {
  redis::ConnectionSettings settings;
  settings.connect_timeout = milliseconds(500);
  settings.command_timeout = milliseconds(2'000);
  auto connection = redis::Connection::create(server.unixEndpoint(), settings);
  if (!connection) return Error::unavailable(connection.error().message);
  auto reply = (*connection)->command(command);
  if (!reply) return Error::unavailable(reply.error().message);
  return std::move(reply).value();
}

// `field:value` of INFO `section`; empty when absent or unreachable.
std::string info(const RedisServer& server, const std::string& section, const std::string& field) {
  auto reply = ask(server, {"INFO", section});
  if (!reply || !reply->string()) return "";
  const std::string text(*reply->string());
  const size_t at = text.find(field + ":");
  if (at == std::string::npos) return "";
  const size_t start = at + field.size() + 1;
  return text.substr(start, text.find_first_of("\r\n", start) - start);
}

// Polls `done` until it is true or `timeout` passes.
template <typename Done>
Status waitFor(const std::string& what, milliseconds timeout, Done done) {
  const auto until = steady_clock::now() + timeout;
  while (steady_clock::now() < until) {
    if (done()) return {};
    std::this_thread::sleep_for(kPoll);
  }
  return Error{ErrorKind::kTimeout, "timed out waiting until " + what};
}

// A node's cluster id (CLUSTER MYID).
Result<std::string> nodeId(const RedisServer& node) {
  auto reply = ask(node, {"CLUSTER", "MYID"});
  if (!reply) return reply.error();
  if (!reply->string()) return Error::internal("CLUSTER MYID is not a string");
  return std::string(*reply->string());
}

Status setSlot(const RedisServer& node, int slot, const std::string& how, const std::string& id) {
  auto reply = ask(node, {"CLUSTER", "SETSLOT", std::to_string(slot), how, id});
  if (!reply) return reply.error();
  return {};
}

}  // namespace

Result<std::unique_ptr<SentinelGroup>> SentinelGroup::create(RedisServerOptions data_options) {
  std::unique_ptr<SentinelGroup> group(new SentinelGroup());
  syncReplicasAtOnce(data_options);
  auto master = RedisServer::create(data_options);
  if (!master) return master.error();
  RedisServerOptions replica_options = data_options;
  replica_options.extra_args.insert(
      replica_options.extra_args.end(),
      {"--replicaof", "127.0.0.1", std::to_string((*master)->port())});
  auto replica = RedisServer::create(replica_options);
  if (!replica) return replica.error();
  group->data_.push_back(std::move(master).value());
  group->data_.push_back(std::move(replica).value());
  RedisServer& replica_server = *group->data_[1];
  if (auto synced = waitFor(
          "the replica is in sync", kSetupTimeout,
          [&] { return info(replica_server, "replication", "master_link_status") == "up"; });
      !synced) {
    return synced.error();
  }
  for (int i = 0; i < 3; ++i) {
    RedisServerOptions options;
    RedisServerOptions::Sentinel sentinel;
    sentinel.master_name = kMasterName;
    sentinel.master_port = group->data_[0]->port();
    options.sentinel = sentinel;
    auto started = RedisServer::create(options);
    if (!started) return started.error();
    group->sentinels_.push_back(std::move(started).value());
  }
  for (auto& sentinel : group->sentinels_) {
    RedisServer& server = *sentinel;
    auto knows =
        waitFor("every sentinel knows the replica and the other sentinels", kSetupTimeout, [&] {
          auto replicas = ask(server, {"SENTINEL", "REPLICAS", kMasterName});
          auto others = ask(server, {"SENTINEL", "SENTINELS", kMasterName});
          return replicas && others && replicas->size() == 1 && others->size() == 2;
        });
    if (!knows) return knows.error();
  }
  return group;
}

std::string SentinelGroup::uri(const std::string& userinfo) const {
  std::string hosts;
  for (const auto& sentinel : sentinels_) {
    hosts += (hosts.empty() ? "" : ",") + sentinel->uri();
  }
  return "redis+sentinel://" + (userinfo.empty() ? "" : userinfo + "@") + hosts + "/" + kMasterName;
}

Result<int> SentinelGroup::masterPort() {
  for (auto& sentinel : sentinels_) {
    if (!sentinel->running()) continue;
    auto reply = ask(*sentinel, {"SENTINEL", "GET-MASTER-ADDR-BY-NAME", kMasterName});
    if (!reply || reply->size() != 2) continue;
    auto port = reply->at(1);
    if (port && port->string()) return std::atoi(std::string(*port->string()).c_str());
  }
  return Error::unavailable("no sentinel names a master");
}

Result<RedisServer*> SentinelGroup::master() {
  auto port = masterPort();
  if (!port) return port.error();
  for (auto& server : data_) {
    if (server->port() == *port) return server.get();
  }
  return Error::notFound("the sentinels name port " + std::to_string(*port));
}

Result<RedisServer*> SentinelGroup::replica() {
  auto current = master();
  if (!current) return current.error();
  return data_[0].get() == *current ? data_[1].get() : data_[0].get();
}

Result<RedisServer*> SentinelGroup::waitForFailover(int old_port, milliseconds timeout) {
  RedisServer* promoted = nullptr;
  auto done = waitFor("the sentinels promote the replica", timeout, [&] {
    auto current = master();
    if (!current || (*current)->port() == old_port) return false;
    if (info(**current, "replication", "role") != "master") return false;
    promoted = *current;
    return true;
  });
  if (!done) return done.error();
  return promoted;
}

Result<std::unique_ptr<RedisCluster>> RedisCluster::create(RedisServerOptions node_options) {
  std::unique_ptr<RedisCluster> cluster(new RedisCluster());
  if (node_options.cluster_node_timeout.count() == 0) {
    node_options.cluster_node_timeout = milliseconds(1'000);
  }
  syncReplicasAtOnce(node_options);
  std::string addresses;
  for (int i = 0; i < 6; ++i) {
    auto node = RedisServer::create(node_options);
    if (!node) return node.error();
    addresses += " " + (*node)->uri();
    cluster->nodes_.push_back(std::move(node).value());
  }
  const std::string log = cluster->nodes_[0]->dataDir() + "/cluster-create.log";
  const std::string command = "redis-cli --cluster create" + addresses +
                              " --cluster-replicas 1 --cluster-yes >" + log + " 2>&1";
  if (std::system(command.c_str()) != 0) {
    return Error::unavailable("redis-cli --cluster create failed; see " + log);
  }
  if (auto healthy = cluster->waitUntilHealthy(kSetupTimeout); !healthy) return healthy.error();
  return cluster;
}

Status RedisCluster::waitUntilHealthy(milliseconds timeout) {
  return waitFor(
      "every cluster node reports cluster_state:ok with 6 known nodes and every replica is in sync",
      timeout, [&] {
        for (auto& node : nodes_) {
          if (!node->running()) continue;
          auto reply = ask(*node, {"CLUSTER", "INFO"});
          if (!reply || !reply->string()) return false;
          const std::string text(*reply->string());
          if (text.find("cluster_state:ok") == std::string::npos ||
              text.find("cluster_known_nodes:6") == std::string::npos) {
            return false;
          }
          // WAIT 1 on a master answers 0 until its replica is in sync.
          if (info(*node, "replication", "role") == "slave" &&
              info(*node, "replication", "master_link_status") != "up") {
            return false;
          }
        }
        return true;
      });
}

std::string RedisCluster::uri() const { return nodes_.front()->uri(); }

int RedisCluster::ownerSeenBy(RedisServer& node, int slot) {
  auto reply = ask(node, {"CLUSTER", "SLOTS"});
  if (!reply) return 0;
  for (size_t i = 0; i < reply->size(); ++i) {
    // [first, last, [host, port, id] (the master), replicas...]
    auto range = reply->at(i);
    if (!range || range->size() < 3) continue;
    auto first = range->at(0)->integer();
    auto last = range->at(1)->integer();
    auto port = range->at(2)->at(1);
    if (!first || !last || !port || !port->integer()) continue;
    if (slot >= *first && slot <= *last) return static_cast<int>(*port->integer());
  }
  return 0;
}

Result<RedisServer*> RedisCluster::masterOf(int slot) {
  for (auto& node : nodes_) {
    if (!node->running()) continue;
    const int port = ownerSeenBy(*node, slot);
    for (auto& candidate : nodes_) {
      if (port != 0 && candidate->port() == port) return candidate.get();
    }
  }
  return Error::notFound("no node serves slot " + std::to_string(slot));
}

Result<RedisServer*> RedisCluster::otherMaster(int slot) {
  auto owner = masterOf(slot);
  if (!owner) return owner.error();
  for (auto& node : nodes_) {
    if (node.get() != *owner && node->running() && info(*node, "replication", "role") == "master") {
      return node.get();
    }
  }
  return Error::notFound("no other master than the owner of slot " + std::to_string(slot));
}

Result<RedisServer*> RedisCluster::replicaOf(int slot) {
  auto master = masterOf(slot);
  if (!master) return master.error();
  const std::string master_port = std::to_string((*master)->port());
  for (auto& node : nodes_) {
    if (node->running() && info(*node, "replication", "role") == "slave" &&
        info(*node, "replication", "master_port") == master_port) {
      return node.get();
    }
  }
  return Error::notFound("the master of slot " + std::to_string(slot) + " has no replica");
}

Result<RedisServer*> RedisCluster::failover(int slot, milliseconds timeout) {
  auto replica = replicaOf(slot);
  if (!replica) return replica.error();
  auto done = ask(**replica, {"CLUSTER", "FAILOVER"});
  if (!done) return done.error();
  RedisServer* promoted = *replica;
  auto served = waitFor("the replica serves the slot", timeout, [&] {
    auto master = masterOf(slot);
    return master && *master == promoted && info(*promoted, "replication", "role") == "master";
  });
  if (!served) return served.error();
  return promoted;
}

Status RedisCluster::beginMigration(int slot, RedisServer& to) {
  auto from = masterOf(slot);
  if (!from) return from.error();
  auto from_id = nodeId(**from);
  auto to_id = nodeId(to);
  if (!from_id) return from_id.error();
  if (!to_id) return to_id.error();
  // The importing side first, so no moment exists where the owner sends ASK to a node that
  // would refuse it.
  if (auto imported = setSlot(to, slot, "IMPORTING", *from_id); !imported) return imported;
  return setSlot(**from, slot, "MIGRATING", *to_id);
}

Status RedisCluster::moveKeys(int slot, RedisServer& to) {
  auto from = masterOf(slot);
  if (!from) return from.error();
  while (true) {
    auto keys = ask(**from, {"CLUSTER", "GETKEYSINSLOT", std::to_string(slot), "100"});
    if (!keys) return keys.error();
    if (keys->size() == 0) return {};
    std::vector<std::string> migrate = {"MIGRATE", "127.0.0.1", std::to_string(to.port()), "", "0",
                                        "5000",    "KEYS"};
    for (size_t i = 0; i < keys->size(); ++i) {
      migrate.emplace_back(*keys->at(i)->string());
    }
    if (auto moved = ask(**from, migrate); !moved) return moved.error();
  }
}

Status RedisCluster::finishMigration(int slot, RedisServer& to) {
  auto from = masterOf(slot);
  if (!from) return from.error();
  if (auto moved = moveKeys(slot, to); !moved) return moved;
  auto to_id = nodeId(to);
  if (!to_id) return to_id.error();
  // The new owner first, then the old one, then the other masters (redis-cli's order).
  std::vector<RedisServer*> order = {&to, *from};
  for (auto& node : nodes_) {
    if (node.get() != &to && node.get() != *from && node->running() &&
        info(*node, "replication", "role") == "master") {
      order.push_back(node.get());
    }
  }
  for (RedisServer* node : order) {
    if (auto set = setSlot(*node, slot, "NODE", *to_id); !set) return set;
  }
  return waitFor("every node says the slot moved", kSetupTimeout, [&] {
    for (auto& node : nodes_) {
      if (node->running() && ownerSeenBy(*node, slot) != to.port()) return false;
    }
    return true;
  });
}

}  // namespace relay::testing
