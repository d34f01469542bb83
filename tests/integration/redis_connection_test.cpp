#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "redis/connection.h"
#include "redis/endpoint.h"
#include "redis/reconnect.h"
#include "support/open_sockets.h"
#include "support/redis_server.h"
#include "support/sigpipe_watch.h"

namespace relay::redis {
namespace {

using namespace std::string_literals;
using namespace std::chrono_literals;
using testing::RedisTest;

using RedisConnection = RedisTest;

TEST_F(RedisConnection, SetThenGetRoundTrips) {
  auto connection = server().connect();
  const auto set = connection->command({"SET", "greeting", "hello"});
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_EQ(*set->status(), "OK");
  const auto get = connection->command({"GET", "greeting"});
  ASSERT_TRUE(get.ok()) << get.error().message;
  EXPECT_EQ(*get->string(), "hello");
}

TEST_F(RedisConnection, ReconnectKeepsAUsableConnectionAndReplacesABrokenOne) {
  std::unique_ptr<Connection> connection;
  ASSERT_TRUE(reconnect(connection, server().endpoint()).ok());
  ASSERT_NE(connection, nullptr);
  const Connection* first = connection.get();
  ASSERT_TRUE(reconnect(connection, server().endpoint()).ok());
  EXPECT_EQ(connection.get(), first);
  // Another client kills it: the next command fails and the connection reports it is broken.
  ASSERT_TRUE(server().connect()->command({"CLIENT", "KILL", "TYPE", "normal"}).ok());
  EXPECT_FALSE(connection->command({"PING"}).ok());
  ASSERT_FALSE(connection->ok());
  ASSERT_TRUE(reconnect(connection, server().endpoint()).ok());
  EXPECT_TRUE(connection->ok());
  EXPECT_EQ(*connection->command({"PING"})->status(), "PONG");
}

TEST_F(RedisConnection, KeysAndValuesAreBinarySafe) {
  auto connection = server().connect();
  const std::string key = "k\0ey"s;
  const std::string value = "a\0b\r\n\xff\0"s;
  ASSERT_TRUE(connection->command(std::vector<std::string>{"SET", key, value}).ok());
  ASSERT_TRUE(connection->command({"SET", "", ""}).ok());  // empty key and value are legal
  const auto get = connection->command({"GET", key});
  ASSERT_TRUE(get.ok());
  EXPECT_EQ(*get->string(), value);
  EXPECT_EQ(get->string()->size(), 7U);
  // The NUL really is part of the key: the prefix before it names no key.
  EXPECT_TRUE(connection->command({"GET", "k"})->isNil());
  EXPECT_EQ(*connection->command({"GET", ""})->string(), "");
}

TEST_F(RedisConnection, MissingKeyIsNil) {
  auto connection = server().connect();
  const auto get = connection->command({"GET", "absent"});
  ASSERT_TRUE(get.ok());
  EXPECT_TRUE(get->isNil());
  EXPECT_FALSE(get->optionalString()->has_value());
  EXPECT_EQ(get->string().error().kind, ErrorKind::kProtocol);
}

TEST_F(RedisConnection, IntegerAndArrayReplies) {
  auto connection = server().connect();
  EXPECT_EQ(*connection->command({"INCRBY", "counter", "41"})->integer(), 41);
  EXPECT_EQ(*connection->command({"INCR", "counter"})->integer(), 42);
  ASSERT_TRUE(connection->command({"RPUSH", "list", "a", "b", "c"}).ok());
  const auto range = connection->command({"LRANGE", "list", "0", "-1"});
  ASSERT_TRUE(range.ok());
  const auto elements = range->elements();
  ASSERT_TRUE(elements.ok());
  ASSERT_EQ(elements->size(), 3U);
  EXPECT_EQ(*(*elements)[0].string(), "a");
  EXPECT_EQ(*(*elements)[2].string(), "c");
}

TEST_F(RedisConnection, WrongTypeReplyAccessIsAnErrorNotACrash) {
  auto connection = server().connect();
  const auto incr = connection->command({"INCR", "n"});
  ASSERT_TRUE(incr.ok());
  const auto as_string = incr->string();
  ASSERT_FALSE(as_string.ok());
  EXPECT_EQ(as_string.error().kind, ErrorKind::kProtocol);
  EXPECT_FALSE(incr->elements().ok());
  EXPECT_FALSE(incr->at(3).ok());
}

TEST_F(RedisConnection, ErrorReplyIsAReplyErrorAndTheConnectionStaysUsable) {
  auto connection = server().connect();
  ASSERT_TRUE(connection->command({"RPUSH", "list", "x"}).ok());
  const auto get = connection->command({"GET", "list"});
  ASSERT_FALSE(get.ok());
  EXPECT_EQ(get.error().kind, ErrorKind::kReply);
  EXPECT_TRUE(isReplyError(get.error(), "WRONGTYPE"));
  EXPECT_TRUE(connection->ok());
  EXPECT_EQ(*connection->command({"PING"})->status(), "PONG");
}

TEST_F(RedisConnection, UnknownCommandIsAnErrReply) {
  auto connection = server().connect();
  const auto reply = connection->command({"NOSUCHCOMMAND", "x"});
  ASSERT_FALSE(reply.ok());
  EXPECT_TRUE(isReplyError(reply.error(), "ERR"));
  EXPECT_TRUE(connection->ok());
}

TEST_F(RedisConnection, BusyGroupIsRecognisableByItsCode) {
  auto connection = server().connect();
  ASSERT_TRUE(connection->command({"XGROUP", "CREATE", "events", "relay", "0", "MKSTREAM"}).ok());
  const auto again = connection->command({"XGROUP", "CREATE", "events", "relay", "0", "MKSTREAM"});
  ASSERT_FALSE(again.ok());
  EXPECT_TRUE(isReplyError(again.error(), "BUSYGROUP"));
}

TEST_F(RedisConnection, ErrorInsideATransactionStaysInTheArray) {
  auto connection = server().connect();
  ASSERT_TRUE(connection->command({"SET", "text", "abc"}).ok());
  ASSERT_TRUE(connection->command({"MULTI"}).ok());
  ASSERT_TRUE(connection->command({"INCR", "text"}).ok());  // QUEUED
  ASSERT_TRUE(connection->command({"GET", "text"}).ok());   // QUEUED
  const auto exec = connection->command({"EXEC"});
  ASSERT_TRUE(exec.ok()) << exec.error().message;
  ASSERT_EQ(exec->size(), 2U);
  EXPECT_TRUE(exec->at(0)->isError());
  EXPECT_TRUE(isReplyError(exec->at(0)->toError(), "ERR"));
  EXPECT_EQ(*exec->at(1)->string(), "abc");
}

TEST_F(RedisConnection, PipelineReturnsEveryReplyInOrder) {
  auto connection = server().connect();
  const auto replies = connection->pipeline({{"SET", "a", "1"},
                                             {"INCR", "a"},
                                             {"LPUSH", "a", "x"},  // WRONGTYPE
                                             {"GET", "a"}});
  ASSERT_TRUE(replies.ok()) << replies.error().message;
  ASSERT_EQ(replies->size(), 4U);
  EXPECT_EQ(*(*replies)[0]->status(), "OK");
  EXPECT_EQ(*(*replies)[1]->integer(), 2);
  ASSERT_FALSE((*replies)[2].ok());
  EXPECT_TRUE(isReplyError((*replies)[2].error(), "WRONGTYPE"));
  EXPECT_EQ(*(*replies)[3]->string(), "2");
}

TEST_F(RedisConnection, AppendedCommandsAreReadBackWithGetReply) {
  auto connection = server().connect();
  ASSERT_TRUE(connection->appendCommand({"SET", "x", "1"}).ok());
  ASSERT_TRUE(connection->appendCommand({"GET", "x"}).ok());
  EXPECT_EQ(connection->pendingReplies(), 2U);
  // A plain command now would read the SET's reply: refused without breaking anything.
  const auto early = connection->command({"PING"});
  ASSERT_FALSE(early.ok());
  EXPECT_EQ(early.error().kind, ErrorKind::kProtocol);
  EXPECT_EQ(*connection->getReply()->status(), "OK");
  EXPECT_EQ(*connection->getReply()->string(), "1");
  EXPECT_EQ(connection->pendingReplies(), 0U);
  EXPECT_EQ(connection->getReply().error().kind, ErrorKind::kProtocol);
  EXPECT_TRUE(connection->ok());
}

TEST_F(RedisConnection, EmptyCommandIsRefused) {
  auto connection = server().connect();
  EXPECT_EQ(connection->command(std::vector<std::string>{}).error().kind, ErrorKind::kProtocol);
  EXPECT_TRUE(connection->ok());
}

TEST_F(RedisConnection, ConnectsOverTheUnixSocket) {
  const auto endpoint = parseRedisUri("unix://" + server().unixSocketPath());
  ASSERT_TRUE(endpoint.ok()) << endpoint.error().message;
  auto connection = Connection::create(*endpoint);
  ASSERT_TRUE(connection.ok()) << connection.error().message;
  ASSERT_TRUE((*connection)->command({"SET", "via", "unix"}).ok());
  // Same server as the TCP port.
  EXPECT_EQ(*server().connect()->command({"GET", "via"})->string(), "unix");
}

TEST_F(RedisConnection, ConnectsWithTheUriFormOfTheFixture) {
  const auto endpoint = parseRedisUri("redis://" + server().uri() + "/0");
  ASSERT_TRUE(endpoint.ok());
  auto connection = Connection::create(*endpoint);
  ASSERT_TRUE(connection.ok()) << connection.error().message;
  EXPECT_EQ(*(*connection)->command({"PING"})->status(), "PONG");
}

TEST_F(RedisConnection, SelectsTheDatabaseOfTheUri) {
  auto endpoint = server().endpoint();
  endpoint.db = 5;
  auto in_db5 = Connection::create(endpoint);
  ASSERT_TRUE(in_db5.ok()) << in_db5.error().message;
  ASSERT_TRUE((*in_db5)->command({"SET", "where", "db5"}).ok());
  auto in_db0 = server().connect();
  EXPECT_TRUE(in_db0->command({"GET", "where"})->isNil());
  ASSERT_TRUE(in_db0->command({"SELECT", "5"}).ok());
  EXPECT_EQ(*in_db0->command({"GET", "where"})->string(), "db5");
}

TEST_F(RedisConnection, SocketsAreCloseOnExecOverTcpAndUnix) {
  auto over_tcp = server().connect();
  auto over_unix = Connection::create(server().unixEndpoint());
  ASSERT_TRUE(over_unix.ok()) << over_unix.error().message;
  ASSERT_TRUE((*over_unix)->command({"PING"}).ok());
  EXPECT_EQ(testing::socketsWithoutCloexec(), std::vector<int>{});
}

TEST_F(RedisConnection, RefusedConnectionIsAnIoError) {
  const auto endpoint = server().endpoint();
  server().kill9();
  const auto connection = Connection::create(endpoint);
  ASSERT_FALSE(connection.ok());
  EXPECT_EQ(connection.error().kind, ErrorKind::kIo);
  EXPECT_NE(connection.error().message.find(endpoint.describe()), std::string::npos)
      << connection.error().message;
}

TEST_F(RedisConnection, ServerCrashBreaksTheConnectionAndLaterCallsFailFast) {
  auto connection = server().connect();
  ASSERT_TRUE(connection->command({"PING"}).ok());
  server().kill9();
  const auto after_crash = connection->command({"PING"});
  ASSERT_FALSE(after_crash.ok());
  EXPECT_TRUE(after_crash.error().kind == ErrorKind::kClosed ||
              after_crash.error().kind == ErrorKind::kIo)
      << errorKindName(after_crash.error().kind) << ": " << after_crash.error().message;
  EXPECT_FALSE(connection->ok());
  const auto later = connection->command({"PING"});
  ASSERT_FALSE(later.ok());
  EXPECT_EQ(later.error().kind, ErrorKind::kClosed);
  EXPECT_NE(later.error().message.find("create a new Connection"), std::string::npos);
  EXPECT_EQ(connection->appendCommand({"PING"}).error().kind, ErrorKind::kClosed);
}

TEST_F(RedisConnection, LargeWriteToACrashedServerFailsWithoutSigpipe) {
  auto connection = server().connect();
  ASSERT_TRUE(connection->command({"PING"}).ok());
  server().kill9();
  // Far more than a socket buffer: hiredis needs several write(2) calls, and the ones after
  // the peer's RST raise SIGPIPE, which must not kill this process.
  const std::string big(16 * 1024 * 1024, 'x');
  const auto reply = connection->command({"SET", "big", big});
  ASSERT_FALSE(reply.ok());
  EXPECT_TRUE(reply.error().kind == ErrorKind::kIo || reply.error().kind == ErrorKind::kClosed)
      << reply.error().message;
  EXPECT_FALSE(connection->ok());
}

TEST_F(RedisConnection, WritesToAClosedConnectionRaiseNoSigpipeAtAll) {
  auto connection = server().connect();
  ASSERT_TRUE(connection->command({"PING"}).ok());
  server().kill9();
  // With SIGPIPE blocked a raised one would stay pending: none may be raised, not just survived
  // (a per-call signal mask guard would leave it pending here).
  testing::SigpipeWatch watch;
  const auto reply = connection->command({"SET", "big", std::string(16 * 1024 * 1024, 'x')});
  ASSERT_FALSE(reply.ok());
  EXPECT_FALSE(watch.raised());
}

TEST_F(RedisConnection, SlowCommandTimesOutAndBreaksTheConnection) {
  ConnectionSettings settings;
  settings.command_timeout = 200ms;
  auto connection = server().connect(settings);
  const auto blocked = connection->command({"BLPOP", "never-filled", "5"});
  ASSERT_FALSE(blocked.ok());
  EXPECT_EQ(blocked.error().kind, ErrorKind::kTimeout) << blocked.error().message;
  // The late reply would be read as the answer to the next command: the connection is done.
  EXPECT_FALSE(connection->ok());
  EXPECT_EQ(connection->command({"PING"}).error().kind, ErrorKind::kClosed);
}

TEST_F(RedisConnection, DebugSleepLongerThanTheTimeoutIsATimeout) {
  ConnectionSettings settings;
  settings.command_timeout = 100ms;
  auto connection = server().connect(settings);
  const auto slept = connection->command({"DEBUG", "SLEEP", "0.5"});
  ASSERT_FALSE(slept.ok());
  EXPECT_EQ(slept.error().kind, ErrorKind::kTimeout) << slept.error().message;
}

TEST_F(RedisConnection, LongerTimeoutLetsABlockingCommandFinish) {
  ConnectionSettings settings;
  settings.command_timeout = 100ms;
  auto connection = server().connect(settings);
  ASSERT_TRUE(connection->setCommandTimeout(5s).ok());
  const auto blocked = connection->command({"BLPOP", "never-filled", "0.3"});
  ASSERT_TRUE(blocked.ok()) << blocked.error().message;
  EXPECT_TRUE(blocked->isNil());
}

TEST_F(RedisConnection, ConnectionKnowsItsEndpoint) {
  auto connection = server().connect();
  EXPECT_EQ(connection->endpoint(), server().endpoint());
}

}  // namespace
}  // namespace relay::redis
