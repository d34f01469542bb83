#include <gtest/gtest.h>

#include <string>

#include "redis/connection.h"
#include "redis/endpoint.h"
#include "support/redis_server.h"

namespace relay::redis {
namespace {

using testing::RedisServerOptions;
using testing::RedisTest;

constexpr const char* kPassword = "s3cret-pw";

/// A server that demands a password and also knows an ACL user.
class RedisAuth : public RedisTest {
 protected:
  RedisServerOptions serverOptions() const override {
    RedisServerOptions options;
    options.extra_args = {"--requirepass", kPassword, "--user", "alice", "on",
                          ">alice-pw",     "~*",      "&*",     "+@all"};
    return options;
  }

  Endpoint parse(const std::string& uri) {
    auto endpoint = parseRedisUri(uri);
    EXPECT_TRUE(endpoint.ok()) << endpoint.error().message;
    return endpoint.ok() ? *endpoint : Endpoint{};
  }
};

TEST_F(RedisAuth, PasswordAndDatabaseFromTheUriAreApplied) {
  auto connection =
      Connection::create(parse("redis://:" + std::string(kPassword) + "@" + server().uri() + "/3"));
  ASSERT_TRUE(connection.ok()) << connection.error().message;
  ASSERT_TRUE((*connection)->command({"SET", "k", "in-db-3"}).ok());
  const auto info = (*connection)->command({"CLIENT", "INFO"});
  ASSERT_TRUE(info.ok()) << info.error().message;
  EXPECT_NE(info->string()->find(" db=3 "), std::string::npos) << *info->string();

  auto db0 = Connection::create(parse("redis://:" + std::string(kPassword) + "@" + server().uri()));
  ASSERT_TRUE(db0.ok()) << db0.error().message;
  EXPECT_TRUE((*db0)->command({"GET", "k"})->isNil());
}

TEST_F(RedisAuth, AclUserAndPasswordAreSentTogether) {
  auto connection = Connection::create(parse("redis://alice:alice-pw@" + server().uri()));
  ASSERT_TRUE(connection.ok()) << connection.error().message;
  const auto whoami = (*connection)->command({"ACL", "WHOAMI"});
  ASSERT_TRUE(whoami.ok()) << whoami.error().message;
  EXPECT_EQ(*whoami->string(), "alice");
}

TEST_F(RedisAuth, WrongPasswordIsAReplyErrorThatDoesNotEchoIt) {
  const auto connection =
      Connection::create(parse("redis://alice:Hunter2-wrong@" + server().uri()));
  ASSERT_FALSE(connection.ok());
  EXPECT_TRUE(isReplyError(connection.error(), "WRONGPASS")) << connection.error().message;
  EXPECT_EQ(connection.error().message.find("Hunter2"), std::string::npos);
}

TEST_F(RedisAuth, ConnectingWithoutAuthIsRefusedWithNoauth) {
  const auto connection = Connection::create(server().endpoint());  // no password
  ASSERT_FALSE(connection.ok());
  EXPECT_TRUE(isReplyError(connection.error(), "NOAUTH")) << connection.error().message;
  EXPECT_TRUE(retryCannotHelp(connection.error()));
}

TEST_F(RedisAuth, PasswordAndDbWorkOverTheUnixSocketToo) {
  auto connection = Connection::create(
      parse("unix://" + server().unixSocketPath() + "?password=" + kPassword + "&db=1"));
  ASSERT_TRUE(connection.ok()) << connection.error().message;
  ASSERT_TRUE((*connection)->command({"SET", "k", "in-db-1"}).ok());
  const auto info = (*connection)->command({"CLIENT", "INFO"});
  ASSERT_TRUE(info.ok()) << info.error().message;
  EXPECT_NE(info->string()->find(" db=1 "), std::string::npos) << *info->string();
}

TEST_F(RedisAuth, AclUserWorksOverTheUnixSocketToo) {
  auto connection = Connection::create(
      parse("unix://" + server().unixSocketPath() + "?user=alice&password=alice-pw"));
  ASSERT_TRUE(connection.ok()) << connection.error().message;
  EXPECT_EQ(*(*connection)->command({"ACL", "WHOAMI"})->string(), "alice");
}

TEST_F(RedisAuth, WrongPasswordOverTheUnixSocketIsRefusedWithoutEchoingIt) {
  const auto connection =
      Connection::create(parse("unix://" + server().unixSocketPath() + "?password=Hunter2-wrong"));
  ASSERT_FALSE(connection.ok());
  EXPECT_TRUE(isReplyError(connection.error(), "WRONGPASS")) << connection.error().message;
  EXPECT_EQ(connection.error().message.find("Hunter2"), std::string::npos);
}

}  // namespace
}  // namespace relay::redis
