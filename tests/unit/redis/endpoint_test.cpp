#include "redis/endpoint.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace relay::redis {
namespace {

using Transport = Endpoint::Transport;

Endpoint tcp(std::string host, int port, std::string user = "", std::string password = "",
             int db = 0) {
  Endpoint endpoint;
  endpoint.host = std::move(host);
  endpoint.port = port;
  endpoint.username = std::move(user);
  endpoint.password = std::move(password);
  endpoint.db = db;
  return endpoint;
}

struct Accepted {
  std::string uri;
  Endpoint expected;
  std::string described;
};

TEST(ParseRedisUri, AcceptsEveryDocumentedForm) {
  Endpoint socket;
  socket.transport = Transport::kUnix;
  socket.host.clear();
  socket.port = 0;
  socket.unix_path = "/run/redis/redis.sock";

  const std::vector<Accepted> cases = {
      {"127.0.0.1:6379", tcp("127.0.0.1", 6379), "127.0.0.1:6379"},
      {"redis.internal:6380", tcp("redis.internal", 6380), "redis.internal:6380"},
      {"[::1]:6379", tcp("::1", 6379), "[::1]:6379"},
      {"redis://localhost:6379", tcp("localhost", 6379), "localhost:6379"},
      {"redis://localhost:6379/", tcp("localhost", 6379), "localhost:6379"},
      {"redis://localhost:6379/0", tcp("localhost", 6379), "localhost:6379"},
      {"redis://localhost:6379/15", tcp("localhost", 6379, "", "", 15),
       "redis://localhost:6379/15"},
      {"redis://:s3cret@10.0.0.5:6379", tcp("10.0.0.5", 6379, "", "s3cret"),
       "redis://:***@10.0.0.5:6379"},
      {"redis://app:s3cret@10.0.0.5:6379/2", tcp("10.0.0.5", 6379, "app", "s3cret", 2),
       "redis://app:***@10.0.0.5:6379/2"},
      {"redis://app@10.0.0.5:6379", tcp("10.0.0.5", 6379, "app", ""), "redis://app@10.0.0.5:6379"},
      {"redis://app:pw@[fe80::1]:7000/1", tcp("fe80::1", 7000, "app", "pw", 1),
       "redis://app:***@[fe80::1]:7000/1"},
      {"redis://app:p%40ss%3Aw%2Fd@h:1", tcp("h", 1, "app", "p@ss:w/d"), "redis://app:***@h:1"},
      {"redis://app:p@ss/w@h:65535", tcp("h", 65535, "app", "p@ss/w"), "redis://app:***@h:65535"},
      {"unix:///run/redis/redis.sock", socket, "unix:///run/redis/redis.sock"},
      {"redis://host", tcp("host", 6379), "host:6379"},
      {"redis://u:pw@[::1]/4", tcp("::1", 6379, "u", "pw", 4), "redis://u:***@[::1]:6379/4"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.uri);
    const auto parsed = parseRedisUri(c.uri);
    ASSERT_TRUE(parsed.ok()) << parsed.error().message;
    EXPECT_EQ(*parsed, c.expected);
    EXPECT_EQ(parsed->describe(), c.described);
  }
}

struct Rejected {
  std::string uri;
  std::string message_part;
};

TEST(ParseRedisUri, RejectsMalformedInputNamingTheBadPart) {
  const std::vector<Rejected> cases = {
      {"", "invalid Redis URI: empty"},
      {"localhost", "missing port in 'localhost'"},
      {":6379", "missing host before ':6379'"},
      {"localhost:", "port '' is not a number from 1 to 65535"},
      {"localhost:0", "port '0' is not a number from 1 to 65535"},
      {"localhost:65536", "port '65536' is not a number from 1 to 65535"},
      {"localhost:+80", "port '+80' is not a number from 1 to 65535"},
      {"localhost:63 79", "port '63 79' is not a number from 1 to 65535"},
      {"localhost:99999999999", "port '99999999999' is not a number from 1 to 65535"},
      {"::1:6379", "IPv6 address '::1' must be in brackets, as in [::1]:6379"},
      {"[::1:6379", "unterminated '[' in IPv6 address '[::1:6379'"},
      {"[::1]", "missing port after '[::1]' (expected [addr]:port)"},
      {"[]:6379", "empty IPv6 address in '[]:6379'"},
      {"user:pw@host:6379", "a user, password or database needs the redis:// form"},
      {"host:6379/2", "a user, password or database needs the redis:// form"},
      {"redis://", "missing host"},
      {"redis://host:6379/x", "database 'x' is not a non-negative number"},
      {"redis://host:6379/-1", "database '-1' is not a non-negative number"},
      {"redis://host:6379/1/2", "database '1/2' is not a non-negative number"},
      {"redis://@host:6379", "empty user and password before '@'"},
      {"redis://:@host:6379", "empty user and password before '@'"},
      {"redis://u:%zz@host:6379", "bad %-escape in the password"},
      {"redis://u:abc%4@host:6379", "incomplete %-escape in the password"},
      {"redis://%g1:pw@host:6379", "bad %-escape in the user name"},
      {"rediss://", "missing host"},
      {"redis+sentinel://s1:26379", "missing /MASTER_NAME after the sentinels"},
      {"redis+sentinel://s1:26379/", "missing /MASTER_NAME after the sentinels"},
      {"redis+sentinel://s1:26379,/mymaster", "missing host"},
      {"redis+sentinel://s1:0/mymaster", "port '0' is not a number from 1 to 65535"},
      {"redis+sentinel://s1/mymaster/x", "database 'x' is not a non-negative number"},
      {"unix:///run/r.sock?db=x", "database 'x' is not a non-negative number"},
      {"unix:///run/r.sock?pass=1", "unknown unix:// parameter 'pass'"},
      {"unix:///run/r.sock?password=%zz", "bad %-escape in the password"},
      {"http://host:80", "unsupported scheme 'http://'"},
      {"unix://", "unix:// must be followed by an absolute socket path"},
      {"unix://relative.sock", "unix:// must be followed by an absolute socket path"},
      {"unix:///", "unix:// socket path is just '/'"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.uri);
    const auto parsed = parseRedisUri(c.uri);
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.error().kind, ErrorKind::kInvalidArgument);
    EXPECT_NE(parsed.error().message.find(c.message_part), std::string::npos)
        << parsed.error().message;
    // Every message also says what would have been accepted.
    EXPECT_NE(parsed.error().message.find("expected host:port, redis://"), std::string::npos)
        << parsed.error().message;
  }
}

TEST(ParseRedisUri, RedissIsTlsOnTheSameGrammar) {
  const auto parsed = parseRedisUri("rediss://relay:pw@cache.example:6380/1");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  Endpoint expected = tcp("cache.example", 6380, "relay", "pw", 1);
  expected.tls = true;
  EXPECT_EQ(*parsed, expected);
  EXPECT_EQ(parsed->describe(), "rediss://relay:***@cache.example:6380/1");
  const auto bare = parseRedisUri("rediss://cache.example");
  ASSERT_TRUE(bare.ok()) << bare.error().message;
  EXPECT_TRUE(bare->tls);
  EXPECT_EQ(bare->port, 6379);
  EXPECT_EQ(bare->describe(), "rediss://cache.example:6379");
}

TEST(ParseRedisUri, UnixSocketTakesUserPasswordAndDbAsParameters) {
  const auto parsed = parseRedisUri("unix:///run/redis.sock?user=relay&password=p%26w&db=3");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->transport, Transport::kUnix);
  EXPECT_EQ(parsed->unix_path, "/run/redis.sock");
  EXPECT_EQ(parsed->username, "relay");
  EXPECT_EQ(parsed->password, "p&w");
  EXPECT_EQ(parsed->db, 3);
  EXPECT_EQ(parsed->describe(), "unix:///run/redis.sock as relay db 3");
  const auto password_only = parseRedisUri("unix:///run/redis.sock?password=s3cret");
  ASSERT_TRUE(password_only.ok());
  EXPECT_EQ(password_only->username, "");
  EXPECT_EQ(password_only->password, "s3cret");
}

TEST(ParseRedisUri, SentinelNamesEverySentinelAndTheMasterGroup) {
  const auto parsed =
      parseRedisUri("redis+sentinel://relay:pw@10.0.0.1:26380,10.0.0.2,[::1]:5000/prod-main/2");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  ASSERT_EQ(parsed->sentinels.size(), 3U);
  EXPECT_EQ(parsed->sentinels[0], (Address{"10.0.0.1", 26380, ""}));
  EXPECT_EQ(parsed->sentinels[1], (Address{"10.0.0.2", 26379, ""}));
  EXPECT_EQ(parsed->sentinels[2], (Address{"::1", 5000, ""}));
  EXPECT_EQ(parsed->master_name, "prod-main");
  EXPECT_EQ(parsed->db, 2);
  EXPECT_EQ(parsed->username, "relay");
  EXPECT_EQ(parsed->password, "pw");
  EXPECT_FALSE(parsed->tls);
  EXPECT_EQ(parsed->describe(),
            "redis+sentinel://relay:***@10.0.0.1:26380,10.0.0.2:26379,[::1]:5000/prod-main/2");
  const auto tls = parseRedisUri("rediss+sentinel://s1/m");
  ASSERT_TRUE(tls.ok()) << tls.error().message;
  EXPECT_TRUE(tls->tls);
  EXPECT_EQ(tls->describe(), "rediss+sentinel://s1:26379/m");
}

TEST(ParseRedisUri, EachParseHasItsOwnTopology) {
  const auto first = parseRedisUri("127.0.0.1:6379");
  const auto second = parseRedisUri("127.0.0.1:6379");
  ASSERT_TRUE(first.ok() && second.ok());
  ASSERT_NE(first->topology, nullptr);
  EXPECT_NE(first->topology, second->topology);
  EXPECT_EQ(*first, *second);  // the topology is shared state, not part of the address
  const Endpoint copy = *first;
  EXPECT_EQ(copy.topology, first->topology);
}

TEST(ParseRedisUri, ErrorMessagesNeverContainThePassword) {
  for (const std::string uri :
       {"redis://app:Hunter2@host:0", "redis://app:Hunter2@host:", "redis://app:Hunter2@host:1/x",
        "redis://app:Hunter2/x@host:abc", "redis://app:Hunter2@::1:6379",
        "redis://app:Hunter2%@host:1", "rediss://app:Hunter2@host:0",
        "unix:///s?password=Hunter2&x=1", "redis+sentinel://u:Hunter2@h:1",
        "redis+sentinel://u:Hunter2@h:x/m"}) {
    SCOPED_TRACE(uri);
    const auto parsed = parseRedisUri(uri);
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.error().message.find("Hunter2"), std::string::npos) << parsed.error().message;
  }
}

TEST(EndpointDescribe, NeverPrintsThePassword) {
  const auto parsed = parseRedisUri("redis://admin:Hunter2@db.example:6379/3");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->password, "Hunter2");
  EXPECT_EQ(parsed->describe().find("Hunter2"), std::string::npos);
  EXPECT_EQ(parsed->describe(), "redis://admin:***@db.example:6379/3");
}

TEST(EndpointDescribe, UnixSocketWithAuthNamesTheUserOnly) {
  Endpoint endpoint;
  endpoint.transport = Transport::kUnix;
  endpoint.unix_path = "/tmp/r.sock";
  endpoint.password = "Hunter2";
  endpoint.db = 4;
  EXPECT_EQ(endpoint.describe(), "unix:///tmp/r.sock as default db 4");
}

TEST(ParseRedisUri, DefaultValueOfRedisUriParses) {
  const auto parsed = parseRedisUri("127.0.0.1:6379");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->transport, Transport::kTcp);
  EXPECT_FALSE(parsed->hasAuth());
  EXPECT_EQ(parsed->db, 0);
}

}  // namespace
}  // namespace relay::redis
