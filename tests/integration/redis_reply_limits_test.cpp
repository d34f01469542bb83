// ReplyLimits against a real redis-server, over plain TCP and over TLS: a stream field larger
// than the limits arrives as [its first bytes, its true length] and the connection goes on.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>

#include "redis/connection.h"
#include "redis/endpoint.h"
#include "support/redis_server.h"
#include "support/test_certificates.h"

namespace relay::redis {
namespace {

using testing::RedisServer;
using testing::RedisServerOptions;
using testing::TestCertificates;

constexpr std::size_t kHuge = 8u << 20;

ReplyLimits limits() {
  ReplyLimits limits;
  limits.max_bulk = 1u << 20;
  limits.max_array_bytes = 2u << 20;
  limits.kept = 16;
  return limits;
}

// Writes an 8 MiB entry and a small one, reads them back with and without limits.
void expectCutAndWhole(Connection& connection) {
  const std::string huge(kHuge, 'h');
  ASSERT_TRUE(connection.command({"XADD", "s", "1-0", "event", huge, "other", "v"}).ok());
  ASSERT_TRUE(connection.command({"XADD", "s", "2-0", "event", "{}"}).ok());
  auto cut = connection.command({"XRANGE", "s", "-", "+"}, limits());
  ASSERT_TRUE(cut.ok()) << cut.error().message;
  ASSERT_EQ(cut->size(), 2u);
  const ReplyView fields = *cut->at(0)->at(1);
  ASSERT_EQ(fields.size(), 4u);
  EXPECT_EQ(*fields.at(0)->string(), "event");
  ASSERT_TRUE(fields.at(1)->isArray());
  EXPECT_EQ(*fields.at(1)->at(0)->string(), std::string(16, 'h'));
  EXPECT_EQ(*fields.at(1)->at(1)->integer(), static_cast<long long>(kHuge));
  EXPECT_EQ(*fields.at(3)->string(), "v");
  EXPECT_EQ(*cut->at(1)->at(1)->at(1)->string(), "{}");
  // The connection goes on, replies without limits whole.
  EXPECT_EQ(*connection.command({"PING"})->status(), "PONG");
  auto whole = connection.command({"XRANGE", "s", "-", "+", "COUNT", "1"});
  ASSERT_TRUE(whole.ok()) << whole.error().message;
  EXPECT_EQ(whole->at(0)->at(1)->at(1)->string()->size(), kHuge);
}

// A pipeline whose later commands ask for limits, on a connection that never asked for any
// before (the console's Pending page: HGETALL, HGETALL, XRANGE per message); each reply keeps
// its own.
void expectPipelineCutsOnlyWhatAskedForLimits(Connection& connection) {
  const std::string huge(kHuge, 'h');
  ASSERT_TRUE(connection.command({"XADD", "p", "1-0", "event", huge}).ok());
  ASSERT_TRUE(connection.command({"SET", "k", huge}).ok());
  auto replies = connection.pipeline({{"GET", "k"}, {"XRANGE", "p", "-", "+"}, {"GET", "k"}},
                                     {std::nullopt, limits(), std::nullopt});
  ASSERT_TRUE(replies.ok()) << replies.error().message;
  ASSERT_EQ(replies->size(), 3u);
  for (const auto& reply : *replies) ASSERT_TRUE(reply.ok()) << reply.error().message;
  EXPECT_EQ((*replies)[0]->string()->size(), kHuge);
  const ReplyView value = *(*replies)[1]->at(0)->at(1)->at(1);
  ASSERT_TRUE(value.isArray());
  EXPECT_EQ(*value.at(1)->integer(), static_cast<long long>(kHuge));
  EXPECT_EQ((*replies)[2]->string()->size(), kHuge);
}

TEST(ReplyLimits, AFieldOverTheLimitsArrivesCutOverTcp) {
  auto server = RedisServer::create();
  ASSERT_TRUE(server.ok()) << server.error().message;
  auto endpoint = parseRedisUri("redis://127.0.0.1:" + std::to_string((*server)->port()));
  auto connection = Connection::create(*endpoint);
  ASSERT_TRUE(connection.ok()) << connection.error().message;
  expectPipelineCutsOnlyWhatAskedForLimits(**connection);
  expectCutAndWhole(**connection);
}

TEST(ReplyLimits, AFieldOverTheLimitsArrivesCutOverTls) {
  auto pki = TestCertificates::create();
  ASSERT_TRUE(pki.ok()) << pki.error().message;
  RedisServerOptions options;
  options.tls = RedisServerOptions::Tls{pki->serverCert(), pki->serverKey(), pki->caCert(), false};
  auto server = RedisServer::create(options);
  ASSERT_TRUE(server.ok()) << server.error().message;
  auto endpoint = parseRedisUri("rediss://127.0.0.1:" + std::to_string((*server)->port()));
  ASSERT_TRUE(endpoint.ok());
  endpoint->tls_settings.ca_file = pki->caCert();
  auto connection = Connection::create(*endpoint);
  ASSERT_TRUE(connection.ok()) << connection.error().message;
  expectCutAndWhole(**connection);
}

}  // namespace
}  // namespace relay::redis
