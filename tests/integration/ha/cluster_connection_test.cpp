// A Connection against a real Redis Cluster (three masters with one replica each, made by
// `redis-cli --cluster create`): it reaches the master of its slot from any node, follows MOVED
// when the slot moves (commands, pipelines, scripts the new node never saw), and sends one
// command to the importing node on ASK while the slot migrates.
#include <gtest/gtest.h>

#include "redis/cluster.h"
#include "redis/connection.h"
#include "redis/topology.h"
#include "support/redis_topologies.h"

namespace relay::testing {
namespace {

const std::string kStream = "{events}";

struct ClusterSetup {
  std::unique_ptr<RedisCluster> cluster;
  int slot = redis::keySlot(kStream);
  RedisServer* owner = nullptr;  // the master of the slot at the start
  RedisServer* other = nullptr;  // another master
};

ClusterSetup startCluster() {
  ClusterSetup setup;
  auto cluster = RedisCluster::create();
  if (!cluster) throw std::runtime_error(cluster.error().message);
  setup.cluster = std::move(cluster).value();
  auto owner = setup.cluster->masterOf(setup.slot);
  auto other = setup.cluster->otherMaster(setup.slot);
  if (!owner || !other) throw std::runtime_error("the new cluster has no master for the slot");
  setup.owner = *owner;
  setup.other = *other;
  return setup;
}

// An endpoint naming `node` for keys in the slot of kStream, as Relay's configuration makes it.
redis::Endpoint endpointVia(const RedisServer& node) {
  auto endpoint = redis::parseRedisUri(node.uri());
  if (!endpoint) throw std::runtime_error(endpoint.error().message);
  endpoint->slot_key = kStream;
  return std::move(endpoint).value();
}

// `command` on `node` exactly as sent: no redirect followed (appendCommand/getReply).
redis::Result<redis::Reply> rawOn(const RedisServer& node, const std::vector<std::string>& command,
                                  bool asking = false) {
  auto connection = redis::Connection::create(node.unixEndpoint());
  if (!connection) return connection.error();
  if (asking) {
    if (auto sent = (*connection)->appendCommand({"ASKING"}); !sent) return sent.error();
  }
  if (auto sent = (*connection)->appendCommand(command); !sent) return sent.error();
  if (asking) {
    if (auto asked = (*connection)->getReply(); !asked) return asked.error();
  }
  return (*connection)->getReply();
}

std::string text(const redis::Result<redis::Reply>& reply) {
  if (!reply) return "error: " + reply.error().message;
  if (reply->isNil()) return "(nil)";
  if (auto string = reply->string()) return std::string(*string);
  if (auto integer = reply->integer()) return std::to_string(*integer);
  if (auto status = reply->status()) return std::string(*status);
  return "?";
}

TEST(ClusterConnection, ReachesTheSlotsMasterFromAnyNodeAndFollowsItWhenTheSlotMoves) {
  ClusterSetup setup = startCluster();
  const redis::Endpoint endpoint = endpointVia(*setup.other);
  auto connection = redis::Connection::create(endpoint);
  ASSERT_TRUE(connection.ok()) << connection.error().message;
  EXPECT_TRUE((*connection)->cluster());
  EXPECT_EQ((*connection)->server(), setup.owner->uri());
  const redis::Script length("return redis.call('XLEN', KEYS[1])");
  ASSERT_TRUE((*connection)->command({"XADD", kStream, "*", "n", "1"}).ok());
  EXPECT_EQ(text((*connection)->eval(length, {kStream}, {})), "1");

  // The slot moves to `other`: the next script gets MOVED, follows it, and is sent as EVAL
  // there (NOSCRIPT: that node never saw it).
  ASSERT_TRUE(setup.cluster->beginMigration(setup.slot, *setup.other).ok());
  ASSERT_TRUE(setup.cluster->finishMigration(setup.slot, *setup.other).ok());
  EXPECT_EQ(text((*connection)->eval(length, {kStream}, {})), "1");
  EXPECT_EQ((*connection)->server(), setup.other->uri());
  EXPECT_TRUE((*connection)->ok());

  // And back: a whole pipeline answered MOVED is sent again, in order, to the owner.
  ASSERT_TRUE(setup.cluster->beginMigration(setup.slot, *setup.owner).ok());
  ASSERT_TRUE(setup.cluster->finishMigration(setup.slot, *setup.owner).ok());
  auto replies = (*connection)
                     ->pipeline({{"XADD", kStream, "*", "n", "2"},
                                 {"HSET", "relay:" + kStream + ":h", "f", "v"},
                                 {"XLEN", kStream}});
  ASSERT_TRUE(replies.ok()) << replies.error().message;
  ASSERT_EQ(replies->size(), 3U);
  EXPECT_TRUE((*replies)[0].ok()) << text((*replies)[0]);
  EXPECT_EQ(text((*replies)[1]), "1");
  EXPECT_EQ(text((*replies)[2]), "2");
  EXPECT_EQ((*connection)->server(), setup.owner->uri());
  EXPECT_EQ(endpoint.topology->counts().failovers, 2);
  EXPECT_EQ(endpoint.topology->counts().reconnects, 2);
}

TEST(ClusterConnection, SendsOneCommandToTheImportingNodeOnAskThenFollowsMoved) {
  ClusterSetup setup = startCluster();
  const redis::Endpoint endpoint = endpointVia(*setup.owner);
  auto connection = redis::Connection::create(endpoint);
  ASSERT_TRUE(connection.ok()) << connection.error().message;
  const std::string old_key = "relay:" + kStream + ":old";
  const std::string new_key = "relay:" + kStream + ":new";
  ASSERT_TRUE((*connection)->command({"SET", old_key, "here"}).ok());

  ASSERT_TRUE(setup.cluster->beginMigration(setup.slot, *setup.other).ok());
  // A key the migrating owner does not hold: ASK, so it is created on the importing node.
  EXPECT_EQ(text((*connection)->command({"SET", new_key, "there"})), "OK");
  EXPECT_TRUE(redis::isReplyError(rawOn(*setup.owner, {"GET", new_key}).error(), "ASK"));
  EXPECT_EQ(text(rawOn(*setup.other, {"GET", new_key}, /*asking=*/true)), "there");
  // A key it still holds is served where it is, and the connection stays with the owner.
  EXPECT_EQ(text((*connection)->command({"GET", old_key})), "here");
  EXPECT_EQ((*connection)->server(), setup.owner->uri());

  // Once the keys moved, a pipeline's commands are each asked of the importing node.
  ASSERT_TRUE(setup.cluster->moveKeys(setup.slot, *setup.other).ok());
  auto replies = (*connection)->pipeline({{"GET", old_key}, {"GET", new_key}});
  ASSERT_TRUE(replies.ok()) << replies.error().message;
  EXPECT_EQ(text((*replies)[0]), "here");
  EXPECT_EQ(text((*replies)[1]), "there");
  EXPECT_EQ((*connection)->server(), setup.owner->uri());
  EXPECT_EQ(endpoint.topology->counts().failovers, 0);

  ASSERT_TRUE(setup.cluster->finishMigration(setup.slot, *setup.other).ok());
  EXPECT_EQ(text((*connection)->command({"GET", old_key})), "here");
  EXPECT_EQ((*connection)->server(), setup.other->uri());
  EXPECT_EQ(endpoint.topology->counts().failovers, 1);
}

}  // namespace
}  // namespace relay::testing
