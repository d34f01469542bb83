#include "redis/topology.h"

#include <gtest/gtest.h>

namespace relay::redis {
namespace {

TEST(Topology, FirstConnectionsAreNeitherReconnectsNorFailovers) {
  Topology topology;
  topology.connectedTo("10.0.0.1:6379");
  topology.connectedTo("10.0.0.1:6379");
  EXPECT_EQ(topology.counts().reconnects, 0);
  EXPECT_EQ(topology.counts().failovers, 0);
  EXPECT_EQ(topology.master(), "10.0.0.1:6379");
}

TEST(Topology, AConnectionReplacingABrokenOneIsAReconnect) {
  Topology topology;
  topology.connectedTo("a:1");
  topology.connectionBroke();
  topology.connectionBroke();
  topology.connectedTo("a:1");
  topology.connectedTo("a:1");
  topology.connectedTo("a:1");  // a new worker, not a replacement
  EXPECT_EQ(topology.counts().reconnects, 2);
  EXPECT_EQ(topology.counts().failovers, 0);
}

TEST(Topology, ANewMasterIsOneFailoverHoweverManyConnectionsSeeIt) {
  Topology topology;
  topology.connectedTo("a:1");
  for (int i = 0; i < 3; ++i) topology.connectionBroke();
  for (int i = 0; i < 3; ++i) topology.connectedTo("b:2");
  EXPECT_EQ(topology.counts().failovers, 1);
  EXPECT_EQ(topology.counts().reconnects, 3);
  EXPECT_EQ(topology.master(), "b:2");
}

TEST(Topology, ARedirectIsAReconnectAndMovesTheMaster) {
  Topology topology;
  topology.connectedTo("a:1");
  topology.redirectedTo("b:2");
  EXPECT_EQ(topology.counts().reconnects, 1);
  EXPECT_EQ(topology.counts().failovers, 1);
}

}  // namespace
}  // namespace relay::redis
