#include "redis/health.h"

#include <gtest/gtest.h>

namespace relay::redis {
namespace {

TEST(UnhealthyReason, ServersThatCannotServeUsAreUnhealthy) {
  for (const char* text :
       {"NOAUTH Authentication required.", "WRONGPASS invalid username-password pair",
        "READONLY You can't write against a read only replica.",
        "LOADING Redis is loading the dataset in memory",
        "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
        "CLUSTERDOWN The cluster is down", "NOPERM this user has no permissions"}) {
    const auto reason = unhealthyReason(errorFromReply(text));
    ASSERT_TRUE(reason.has_value()) << text;
    EXPECT_EQ(*reason, text);
  }
  EXPECT_EQ(*unhealthyReason(Error{ErrorKind::kIo, "h:1: Connection refused"}),
            "unreachable: h:1: Connection refused");
  EXPECT_TRUE(unhealthyReason(Error{ErrorKind::kTimeout, "x"}).has_value());
  EXPECT_TRUE(unhealthyReason(Error{ErrorKind::kClosed, "x"}).has_value());
  EXPECT_TRUE(unhealthyReason(Error{ErrorKind::kConfig, "bad CA"}).has_value());
}

TEST(UnhealthyReason, AnswersAreHealthy) {
  for (const char* text : {"NOGROUP No such key", "WRONGTYPE Operation against a key",
                           "NOSCRIPT No matching script", "BUSYGROUP exists", "ERR syntax"}) {
    EXPECT_FALSE(unhealthyReason(errorFromReply(text)).has_value()) << text;
  }
}

TEST(Health, UnhealthyUntilAnsweredThenFollowsTheLastCall) {
  Health health;
  EXPECT_TRUE(health.problem().has_value());
  health.healthy();
  EXPECT_FALSE(health.problem().has_value());
  health.failed(errorFromReply("READONLY You can't write against a read only replica."));
  EXPECT_EQ(*health.problem(), "READONLY You can't write against a read only replica.");
  health.failed(errorFromReply("NOGROUP No such key"));
  EXPECT_FALSE(health.problem().has_value());
}

}  // namespace
}  // namespace relay::redis
