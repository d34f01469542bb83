// redis+sentinel:// against one master, one replica and three redis-sentinel processes.
#include <gtest/gtest.h>

#include "redis/connection.h"
#include "redis/topology.h"
#include "support/open_sockets.h"
#include "support/redis_topologies.h"

namespace relay::testing {
namespace {

TEST(SentinelConnection, FindsTheMasterThenTheNewOneAfterAKill9) {
  auto group = SentinelGroup::create();
  ASSERT_TRUE(group.ok()) << group.error().message;
  auto endpoint = redis::parseRedisUri((*group)->uri());
  ASSERT_TRUE(endpoint.ok()) << endpoint.error().message;
  auto master = (*group)->master();
  ASSERT_TRUE(master.ok()) << master.error().message;
  const int old_port = (*master)->port();

  auto connection = redis::Connection::create(*endpoint);
  ASSERT_TRUE(connection.ok()) << connection.error().message;
  EXPECT_EQ((*connection)->server(), (*master)->uri());
  ASSERT_TRUE((*connection)->command({"SET", "k", "before"}).ok());
  ASSERT_TRUE((*connection)->command({"WAIT", "1", "2000"}).ok());
  EXPECT_EQ(socketsWithoutCloexec(), std::vector<int>{});

  (*master)->kill9();
  EXPECT_FALSE((*connection)->command({"GET", "k"}).ok());
  EXPECT_FALSE((*connection)->ok());
  auto promoted = (*group)->waitForFailover(old_port, std::chrono::seconds(30));
  ASSERT_TRUE(promoted.ok()) << promoted.error().message;

  auto again = redis::Connection::create(*endpoint);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ((*again)->server(), (*promoted)->uri());
  EXPECT_EQ(*(*again)->command({"GET", "k"})->string(), "before");
  EXPECT_EQ(endpoint->topology->counts().failovers, 1);
  EXPECT_EQ(endpoint->topology->counts().reconnects, 1);
}

}  // namespace
}  // namespace relay::testing
