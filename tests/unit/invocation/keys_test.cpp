#include "invocation/keys.h"

#include <gtest/gtest.h>

namespace relay::invocation {
namespace {

TEST(StreamKeys, EveryKeyIsUnderTheStreamsRelayPrefix) {
  const StreamKeys keys{"events", "relay"};
  EXPECT_EQ(keys.state("1700000000000-0"), "relay:events:inv:relay:1700000000000-0");
  EXPECT_EQ(keys.dlq(), "relay:events:dlq");
  EXPECT_EQ(keys.stats(), "relay:events:stats");
  EXPECT_EQ(keys.paused(), "relay:events:paused:relay");
  EXPECT_EQ(keys.legacyPaused(), "relay:events:paused");
  EXPECT_EQ(keys.pausedQueue(), "relay:events:paused-queue:relay");
  EXPECT_EQ(keys.clock(), "relay:events:clock:relay");
  EXPECT_EQ(invocationField("users", "events.created.handler"), "users/events.created.handler");
}

TEST(StreamKeys, AHashTaggedStreamKeepsItsTagInEveryKey) {
  // On Redis Cluster only the {tag} is hashed: all of these land in the stream's slot.
  const StreamKeys keys{"{events}", "relay"};
  for (const std::string& key : {keys.state("1-0"), keys.dlq(), keys.stats(), keys.paused(),
                                 keys.legacyPaused(), keys.pausedQueue(), keys.clock()}) {
    EXPECT_NE(key.find("{events}"), std::string::npos) << key;
    EXPECT_EQ(key.find('{'), key.rfind('{')) << "a second tag would change the slot: " << key;
  }
}

}  // namespace
}  // namespace relay::invocation
