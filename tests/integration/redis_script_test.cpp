#include <gtest/gtest.h>

#include <string>

#include "redis/connection.h"
#include "redis/script.h"
#include "support/redis_server.h"

namespace relay::redis {
namespace {

using namespace std::string_literals;
using testing::RedisTest;

using RedisScript = RedisTest;

const Script kConcat(
    "redis.call('SET', KEYS[1], ARGV[1] .. ARGV[2]) return redis.call('GET', KEYS[1])");

bool scriptCached(Connection& connection, const Script& script) {
  const auto exists = connection.command({"SCRIPT", "EXISTS", script.sha1()});
  EXPECT_TRUE(exists.ok());
  return exists.ok() && *exists->at(0)->integer() == 1;
}

TEST_F(RedisScript, LocalSha1MatchesTheServers) {
  auto connection = server().connect();
  const auto loaded = connection->command({"SCRIPT", "LOAD", kConcat.source()});
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  EXPECT_EQ(*loaded->string(), kConcat.sha1());
}

TEST_F(RedisScript, FirstEvalLoadsTheScriptForLaterEvalsha) {
  auto connection = server().connect();
  EXPECT_FALSE(scriptCached(*connection, kConcat));
  const auto reply = connection->eval(kConcat, {"joined"}, {"foo", "bar"});
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  EXPECT_EQ(*reply->string(), "foobar");
  EXPECT_TRUE(scriptCached(*connection, kConcat));
}

TEST_F(RedisScript, EvalRecoversAfterScriptFlush) {
  auto connection = server().connect();
  ASSERT_TRUE(connection->eval(kConcat, {"k"}, {"a", "b"}).ok());
  ASSERT_TRUE(connection->command({"SCRIPT", "FLUSH"}).ok());
  ASSERT_FALSE(scriptCached(*connection, kConcat));
  const auto reply = connection->eval(kConcat, {"k"}, {"c", "d"});
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  EXPECT_EQ(*reply->string(), "cd");
  EXPECT_TRUE(scriptCached(*connection, kConcat));
}

TEST_F(RedisScript, EvalRecoversAfterAServerRestart) {
  auto connection = server().connect();
  ASSERT_TRUE(connection->eval(kConcat, {"k"}, {"a", "b"}).ok());
  ASSERT_TRUE(server().stop().ok());
  ASSERT_TRUE(server().start().ok());
  auto fresh = server().connect();
  const auto reply = fresh->eval(kConcat, {"k"}, {"x", "y"});
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  EXPECT_EQ(*reply->string(), "xy");
}

TEST_F(RedisScript, KeysAndArgumentsAreBinarySafe) {
  auto connection = server().connect();
  const Script length("return {string.len(KEYS[1]), string.len(ARGV[1])}");
  const auto reply = connection->eval(length, {"a\0b"s}, {"\0\0\0"s});
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  EXPECT_EQ(*reply->at(0)->integer(), 3);
  EXPECT_EQ(*reply->at(1)->integer(), 3);
}

TEST_F(RedisScript, ScriptErrorsAreReplyErrors) {
  auto connection = server().connect();
  const Script custom("return redis.error_reply('CONFLICT stale attempt')");
  const auto conflict = connection->eval(custom, {}, {});
  ASSERT_FALSE(conflict.ok());
  EXPECT_TRUE(isReplyError(conflict.error(), "CONFLICT")) << conflict.error().message;

  const Script broken("return redis.call('NOPE')");
  const auto failed = connection->eval(broken, {}, {});
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().kind, ErrorKind::kReply);
  EXPECT_TRUE(connection->ok());
}

TEST_F(RedisScript, EvalOnABrokenConnectionFailsFast) {
  auto connection = server().connect();
  server().kill9();
  ASSERT_FALSE(connection->eval(kConcat, {"k"}, {"a", "b"}).ok());
  const auto again = connection->eval(kConcat, {"k"}, {"a", "b"});
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().kind, ErrorKind::kClosed);
}

}  // namespace
}  // namespace relay::redis
