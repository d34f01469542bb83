// rediss:// against a real redis-server with tls-port and a PKI the test makes with openssl.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "redis/connection.h"
#include "redis/endpoint.h"
#include "support/open_sockets.h"
#include "support/redis_server.h"
#include "support/sigpipe_watch.h"
#include "support/test_certificates.h"

namespace relay::redis {
namespace {

using testing::RedisServer;
using testing::RedisServerOptions;
using testing::TestCertificates;

class RedisTls : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto pki = TestCertificates::create();
    ASSERT_TRUE(pki.ok()) << pki.error().message;
    pki_ = new TestCertificates(std::move(pki).value());
  }
  static void TearDownTestSuite() {
    delete pki_;
    pki_ = nullptr;
  }

  void startServer(bool require_client_certificate) {
    RedisServerOptions options;
    options.tls = RedisServerOptions::Tls{pki_->serverCert(), pki_->serverKey(), pki_->caCert(),
                                          require_client_certificate};
    auto server = RedisServer::create(options);
    ASSERT_TRUE(server.ok()) << server.error().message;
    server_ = std::move(server).value();
  }

  Endpoint endpoint(const std::string& host = "127.0.0.1") {
    auto parsed = parseRedisUri("rediss://" + host + ":" + std::to_string(server_->port()));
    EXPECT_TRUE(parsed.ok()) << parsed.error().message;
    Endpoint endpoint = parsed.ok() ? *parsed : Endpoint{};
    endpoint.tls_settings.ca_file = pki_->caCert();
    return endpoint;
  }

  static TestCertificates* pki_;
  std::unique_ptr<RedisServer> server_;
};

TestCertificates* RedisTls::pki_ = nullptr;

TEST_F(RedisTls, ConnectsWhenTheServerCertificateChainsToTheCa) {
  startServer(false);
  auto connection = Connection::create(endpoint());
  ASSERT_TRUE(connection.ok()) << connection.error().message;
  ASSERT_TRUE((*connection)->command({"SET", "over", "tls"}).ok());
  EXPECT_EQ(*(*connection)->command({"GET", "over"})->string(), "tls");
  EXPECT_EQ(testing::socketsWithoutCloexec(), std::vector<int>{});
}

TEST_F(RedisTls, TheHostNameIsCheckedToo) {
  startServer(false);
  auto by_name = Connection::create(endpoint("localhost"));  // the certificate names localhost
  ASSERT_TRUE(by_name.ok()) << by_name.error().message;
  Endpoint wrong_name = endpoint();
  wrong_name.tls_settings.server_name = "redis.example.com";
  const auto refused = Connection::create(wrong_name);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::kConfig) << refused.error().message;
  EXPECT_NE(refused.error().message.find("redis.example.com"), std::string::npos)
      << refused.error().message;
}

TEST_F(RedisTls, WrongCaIsAClearConfigurationError) {
  startServer(false);
  Endpoint wrong_ca = endpoint();
  wrong_ca.tls_settings.ca_file = pki_->otherCaCert();
  const auto refused = Connection::create(wrong_ca);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::kConfig) << refused.error().message;
  EXPECT_TRUE(retryCannotHelp(refused.error()));
  EXPECT_NE(refused.error().message.find("does not verify against the CA in '" +
                                         pki_->otherCaCert() + "'"),
            std::string::npos)
      << refused.error().message;
}

TEST_F(RedisTls, UnreadableCaFileIsNamed) {
  startServer(false);
  Endpoint missing = endpoint();
  missing.tls_settings.ca_file = pki_->dir() + "/no-such-ca.crt";
  const auto refused = Connection::create(missing);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::kConfig);
  EXPECT_NE(refused.error().message.find("no-such-ca.crt"), std::string::npos)
      << refused.error().message;
}

TEST_F(RedisTls, ServerRequiringAClientCertificateRefusesNoneAndAcceptsOurs) {
  startServer(true);
  const auto without = Connection::create(endpoint());
  ASSERT_FALSE(without.ok());
  EXPECT_EQ(without.error().kind, ErrorKind::kConfig) << without.error().message;
  EXPECT_NE(without.error().message.find("client certificate"), std::string::npos)
      << without.error().message;

  Endpoint with_certificate = endpoint();
  with_certificate.tls_settings.cert_file = pki_->clientCert();
  with_certificate.tls_settings.key_file = pki_->clientKey();
  auto connection = Connection::create(with_certificate);
  ASSERT_TRUE(connection.ok()) << connection.error().message;
  EXPECT_EQ(*(*connection)->command({"PING"})->status(), "PONG");
}

TEST_F(RedisTls, LargeWritesToACrashedServerFailWithoutSigpipe) {
  startServer(false);
  auto unwatched = Connection::create(endpoint());
  auto watched = Connection::create(endpoint());
  ASSERT_TRUE(unwatched.ok()) << unwatched.error().message;
  ASSERT_TRUE(watched.ok()) << watched.error().message;
  ASSERT_TRUE((*unwatched)->command({"PING"}).ok());
  ASSERT_TRUE((*watched)->command({"PING"}).ok());
  server_->kill9();
  // Far more than a socket buffer: OpenSSL writes record after record, and the writes after the
  // peer's RST fail with EPIPE. A SIGPIPE would kill this process.
  const std::string big(16 * 1024 * 1024, 'x');
  const auto reply = (*unwatched)->command({"SET", "big", big});
  ASSERT_FALSE(reply.ok());
  EXPECT_TRUE(reply.error().kind == ErrorKind::kIo || reply.error().kind == ErrorKind::kClosed)
      << reply.error().message;
  // And none is raised at all: blocked, it would stay pending.
  testing::SigpipeWatch watch;
  ASSERT_FALSE((*watched)->command({"SET", "big", big}).ok());
  EXPECT_FALSE(watch.raised());
}

TEST_F(RedisTls, PlainTextClientOnTheTlsPortFailsFast) {
  startServer(false);
  ConnectionSettings settings;
  settings.command_timeout = std::chrono::seconds(5);
  const auto plain = Connection::create(
      server_->endpoint().address().isUnix() ? Endpoint{} : *parseRedisUri(server_->uri()),
      settings);
  ASSERT_FALSE(plain.ok());
  EXPECT_NE(plain.error().kind, ErrorKind::kReply) << plain.error().message;
}

}  // namespace
}  // namespace relay::redis
