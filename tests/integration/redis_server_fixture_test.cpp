#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "redis/connection.h"
#include "support/redis_server.h"

namespace relay::testing {
namespace {

namespace fs = std::filesystem;

bool processExists(pid_t pid) { return ::kill(pid, 0) == 0 || errno != ESRCH; }

std::string configValue(redis::Connection& connection, const std::string& name) {
  const auto reply = connection.command({"CONFIG", "GET", name});
  EXPECT_TRUE(reply.ok());
  if (!reply.ok() || reply->size() != 2) return "<missing>";
  return std::string(*reply->at(1)->string());
}

TEST(RedisServer, ServesOnALoopbackPortAndAUnixSocket) {
  auto server = RedisServer::create();
  ASSERT_TRUE(server.ok()) << server.error().message;
  RedisServer& redis = **server;
  EXPECT_TRUE(redis.running());
  EXPECT_GT(redis.port(), 0);
  EXPECT_EQ(redis.uri(), "127.0.0.1:" + std::to_string(redis.port()));
  EXPECT_TRUE(fs::is_socket(redis.unixSocketPath()));
  EXPECT_EQ(fs::path(redis.unixSocketPath()).parent_path(), fs::path(redis.dataDir()));
  EXPECT_EQ(*redis.connect()->command({"PING"})->status(), "PONG");
  auto over_unix = redis::Connection::create(redis.unixEndpoint());
  ASSERT_TRUE(over_unix.ok()) << over_unix.error().message;
  EXPECT_EQ(*(*over_unix)->command({"PING"})->status(), "PONG");
}

TEST(RedisServer, RunsWithoutPersistenceInItsOwnDirectory) {
  auto server = RedisServer::create();
  ASSERT_TRUE(server.ok()) << server.error().message;
  auto connection = (*server)->connect();
  EXPECT_EQ(configValue(*connection, "save"), "");
  EXPECT_EQ(configValue(*connection, "appendonly"), "no");
  EXPECT_EQ(fs::canonical(configValue(*connection, "dir")), fs::canonical((*server)->dataDir()));
  EXPECT_EQ(configValue(*connection, "bind"), "127.0.0.1");
}

TEST(RedisServer, TwoServersGetDifferentPortsAndDirectories) {
  auto first = RedisServer::create();
  auto second = RedisServer::create();
  ASSERT_TRUE(first.ok()) << first.error().message;
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_NE((*first)->port(), (*second)->port());
  EXPECT_NE((*first)->dataDir(), (*second)->dataDir());
  ASSERT_TRUE((*first)->connect()->command({"SET", "owner", "first"}).ok());
  EXPECT_TRUE((*second)->connect()->command({"GET", "owner"})->isNil());
}

TEST(RedisServer, RestartsOnTheSamePortAndDirectory) {
  auto server = RedisServer::create();
  ASSERT_TRUE(server.ok()) << server.error().message;
  RedisServer& redis = **server;
  const int port = redis.port();
  const std::string dir = redis.dataDir();
  const pid_t first_pid = redis.pid();
  auto before = redis.connect();

  ASSERT_TRUE(redis.stop().ok());
  EXPECT_FALSE(redis.running());
  EXPECT_FALSE(processExists(first_pid));
  EXPECT_FALSE(redis::Connection::create(redis.endpoint()).ok());
  EXPECT_FALSE(before->command({"PING"}).ok());

  ASSERT_TRUE(redis.start().ok());
  EXPECT_EQ(redis.port(), port);
  EXPECT_EQ(redis.dataDir(), dir);
  EXPECT_NE(redis.pid(), first_pid);
  auto after = redis.connect();
  EXPECT_EQ(*after->command({"PING"})->status(), "PONG");
  // A second restart cycle works just as well, this time after a crash.
  redis.kill9();
  ASSERT_TRUE(redis.start().ok());
  EXPECT_EQ(redis.port(), port);
  EXPECT_EQ(*redis.connect()->command({"PING"})->status(), "PONG");
}

TEST(RedisServer, StartWhileRunningIsRefused) {
  auto server = RedisServer::create();
  ASSERT_TRUE(server.ok()) << server.error().message;
  const auto again = (*server)->start();
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.error().message.find("already running"), std::string::npos);
}

TEST(RedisServer, StopAndKillAreHarmlessWhenNotRunning) {
  auto server = RedisServer::create();
  ASSERT_TRUE(server.ok()) << server.error().message;
  (*server)->kill9();
  (*server)->kill9();
  EXPECT_TRUE((*server)->stop().ok());
  EXPECT_EQ((*server)->pid(), -1);
}

TEST(RedisServer, DestructorKillsReapsAndRemovesTheDirectory) {
  pid_t pid = -1;
  std::string dir;
  {
    auto server = RedisServer::create();
    ASSERT_TRUE(server.ok()) << server.error().message;
    pid = (*server)->pid();
    dir = (*server)->dataDir();
    ASSERT_GT(pid, 0);
    ASSERT_TRUE(processExists(pid));
    ASSERT_TRUE(fs::exists(dir));
  }
  // Reaped, not just killed: a zombie would still answer kill(pid, 0).
  EXPECT_FALSE(processExists(pid));
  EXPECT_FALSE(fs::exists(dir));
}

TEST(RedisServer, ExtraArgumentsOverrideTheDefaults) {
  RedisServerOptions options;
  options.extra_args = {"--databases", "2", "--appendonly", "yes"};
  auto server = RedisServer::create(options);
  ASSERT_TRUE(server.ok()) << server.error().message;
  auto connection = (*server)->connect();
  EXPECT_EQ(configValue(*connection, "appendonly"), "yes");
  EXPECT_TRUE(connection->command({"SELECT", "1"}).ok());
  EXPECT_TRUE(redis::isReplyError(connection->command({"SELECT", "2"}).error(), "ERR"));
}

TEST(RedisServer, BadArgumentFailsWithTheServersOwnMessage) {
  RedisServerOptions options;
  options.extra_args = {"--no-such-directive", "1"};
  const auto server = RedisServer::create(options);
  ASSERT_FALSE(server.ok());
  EXPECT_NE(server.error().message.find("before answering PING"), std::string::npos)
      << server.error().message;
  EXPECT_NE(server.error().message.find("no-such-directive"), std::string::npos)
      << server.error().message;
}

TEST(RedisServer, MissingBinaryIsAClearFailure) {
  const char* old_path = std::getenv("PATH");
  const std::string saved = old_path != nullptr ? old_path : "";
  const fs::path empty_dir =
      fs::temp_directory_path() / ("relay-empty-path-" + std::to_string(::getpid()));
  fs::create_directories(empty_dir);
  ::setenv("PATH", empty_dir.c_str(), 1);
  const auto server = RedisServer::create();
  ::setenv("PATH", saved.c_str(), 1);
  fs::remove_all(empty_dir);
  ASSERT_FALSE(server.ok());
  EXPECT_NE(server.error().message.find("redis-server not found on PATH"), std::string::npos)
      << server.error().message;
}

using RedisFixture = RedisTest;

TEST_F(RedisFixture, GivesEachTestARunningServer) {
  EXPECT_TRUE(server().running());
  EXPECT_EQ(*server().connect()->command({"DBSIZE"})->integer(), 0);
}

}  // namespace
}  // namespace relay::testing
