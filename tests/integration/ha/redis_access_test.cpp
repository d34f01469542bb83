// `relay start` and the CLI through the real binary against Redis as it runs in production:
// TLS with a test PKI (wrong CA, client certificate required) and an ACL user limited to
// Relay's keys and commands (the rule docs/operations.md documents). Process runtime.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/system_clock.h"
#include "http/client.h"
#include "integration/ha/ha_apps.h"
#include "integration/ops/relay_binary.h"
#include "support/redis_server.h"
#include "support/spawned_process.h"
#include "support/test_certificates.h"
#include "support/worker_log.h"

namespace relay::testing {
namespace {

using std::chrono::seconds;

// docs/operations.md, "An ACL user for Relay", for REDIS_STREAM={events}.
const std::vector<std::string> kRelayAclUser = {"--user",
                                                "relay",
                                                "on",
                                                ">relay-pw",
                                                "resetkeys",
                                                "~{events}",
                                                "~relay:{events}:*",
                                                "resetchannels",
                                                "-@all",
                                                "+@stream",
                                                "+@hash",
                                                "+get",
                                                "+set",
                                                "+del",
                                                "+exists",
                                                "+pexpire",
                                                "+zadd",
                                                "+zrem",
                                                "+zrangebyscore",
                                                "+zrange",
                                                "+zcard",
                                                "+zremrangebyscore",
                                                "+zscore",
                                                "+zrangebylex",
                                                "+zlexcount",
                                                "+zcount",
                                                "+time",
                                                "+evalsha",
                                                "+eval",
                                                "+smembers",
                                                "+smismember",
                                                "+sunion",
                                                "+sadd",
                                                "+srem",
                                                "+ping",
                                                "+hello",
                                                "+auth",
                                                "+select",
                                                "+cluster|slots"};

std::string firstLine(const std::string& text) { return text.substr(0, text.find('\n')); }

// The admin's view over the plain unix socket (default user, all permissions).
std::unique_ptr<redis::Connection> admin(const RedisServer& server) {
  auto connection = redis::Connection::create(server.unixEndpoint());
  if (!connection) throw std::runtime_error(connection.error().message);
  return std::move(connection).value();
}

class RelayProduction : public ::testing::Test {
 protected:
  std::vector<std::string> env(const std::string& uri, std::vector<std::string> extra = {}) {
    std::vector<std::string> values = apps_.env(uri);
    values.insert(values.end(), extra.begin(), extra.end());
    return values;
  }
  std::unique_ptr<SpawnedProcess> start(const std::vector<std::string>& environment) {
    auto relay =
        std::make_unique<SpawnedProcess>(std::vector<std::string>{RELAY_BINARY, "start"},
                                         environment, (logs_.path() / "relay.log").string());
    EXPECT_TRUE(relay->waitForLog("relay started")) << relay->log();
    http_ = httpAddressInLog(relay->log()).toString();
    return relay;
  }

  // A TLS redis-server with a fresh test PKI (kept in pki_).
  std::unique_ptr<RedisServer> tlsServer(bool require_client_certificate) {
    auto pki = TestCertificates::create();
    if (!pki) throw std::runtime_error(pki.error().message);
    pki_ = std::make_unique<TestCertificates>(std::move(pki).value());
    RedisServerOptions options;
    options.tls = RedisServerOptions::Tls{pki_->serverCert(), pki_->serverKey(), pki_->caCert(),
                                          require_client_certificate};
    auto server = RedisServer::create(options);
    if (!server) throw std::runtime_error(server.error().message);
    return std::move(server).value();
  }

  HaApps apps_{/*with_schedule=*/true};
  TempDir logs_;
  std::string http_;
  std::unique_ptr<TestCertificates> pki_;
};

TEST_F(RelayProduction, WrongCaStopsRelayStartWithOneClearLine) {
  auto server = tlsServer(false);
  const BinaryRun run = runRelay({"start"},
                                 env("rediss://127.0.0.1:" + std::to_string(server->port()),
                                     {"REDIS_TLS_CA=" + pki_->otherCaCert()}),
                                 seconds(30));
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_NE(run.err.find("does not verify against the CA in '" + pki_->otherCaCert() + "'"),
            std::string::npos)
      << run.err;
  EXPECT_EQ(firstLine(run.err) + "\n", run.err);
}

TEST_F(RelayProduction, MissingClientCertificateStopsRelayStart) {
  auto server = tlsServer(true);
  const BinaryRun run = runRelay({"start"},
                                 env("rediss://127.0.0.1:" + std::to_string(server->port()),
                                     {"REDIS_TLS_CA=" + pki_->caCert()}),
                                 seconds(30));
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_NE(run.err.find("client certificate"), std::string::npos) << run.err;
}

TEST_F(RelayProduction, PipelineRunsOverTlsWithAClientCertificate) {
  auto server = tlsServer(true);
  auto relay = start(env("rediss://localhost:" + std::to_string(server->port()),
                         {"REDIS_TLS_CA=" + pki_->caCert(), "REDIS_TLS_CERT=" + pki_->clientCert(),
                          "REDIS_TLS_KEY=" + pki_->clientKey()}));
  auto redis = admin(*server);
  ASSERT_TRUE(redis->command({"XADD", "{events}", "*", "event", R"({"kind":"ha","n":1})"}).ok());
  ASSERT_TRUE(SpawnedProcess::waitUntil([&] { return apps_.runsByEventNumber().count(1) == 1; },
                                        seconds(30)))
      << relay->log();
  const BinaryRun health = runRelay({"health"}, {"RELAY_HTTP_ADDR=" + http_});
  EXPECT_EQ(health.exit_code, 0) << health.out << health.err;
}

TEST_F(RelayProduction, WrongPasswordStopsRelayStartWithoutEchoingIt) {
  RedisServerOptions options;
  options.extra_args = kRelayAclUser;
  auto server = RedisServer::create(options);
  ASSERT_TRUE(server.ok()) << server.error().message;
  const BinaryRun run =
      runRelay({"start"}, env("redis://relay:Hunter2-wrong@" + (*server)->uri()), seconds(30));
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_NE(run.err.find("WRONGPASS"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("redis://relay:***@"), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("Hunter2"), std::string::npos) << run.err;
  EXPECT_EQ(firstLine(run.err) + "\n", run.err);
  const BinaryRun dlq =
      runRelay({"dlq", "ls"}, env("redis://relay:Hunter2-wrong@" + (*server)->uri()));
  EXPECT_EQ(dlq.exit_code, 1);
  EXPECT_EQ(dlq.err.find("Hunter2"), std::string::npos) << dlq.err;
}

TEST_F(RelayProduction, WholePipelineRunsUnderTheDocumentedAclRule) {
  RedisServerOptions options;
  options.extra_args = kRelayAclUser;
  auto server = RedisServer::create(options);
  ASSERT_TRUE(server.ok()) << server.error().message;
  const std::string uri = "redis://relay:relay-pw@" + (*server)->uri();
  // The stream's archive too (docs/replay.md "Archive"): its scripts and reads under the rule.
  auto relay = start(env(uri, {"RELAY_ARCHIVE_RETENTION=7d"}));
  auto redis = admin(**server);
  for (const char* event : {R"({"kind":"ha","n":1})", R"({"kind":"ha","n":2,"fail":true})",
                            R"({"kind":"other"})", "not json"}) {
    ASSERT_TRUE(redis->command({"XADD", "{events}", "*", "event", event}).ok());
  }
  const auto pending = [&] {
    auto reply = redis->command({"XPENDING", "{events}", "relay"});
    return reply.ok() ? *reply->at(0)->integer() : -1;
  };
  const auto archived = [&] {
    auto reply = redis->command({"XLEN", "relay:{events}:archive:relay"});
    return reply.ok() ? *reply->integer() : -1;
  };
  const auto dlq_length = [&] {
    auto reply = redis->command({"XLEN", "relay:{events}:dlq"});
    return reply.ok() ? *reply->integer() : -1;
  };
  // The catch-up publication of the schedule runs record.sh once with the occurrence.
  ASSERT_TRUE(SpawnedProcess::waitUntil(
      [&] {
        return pending() == 0 && dlq_length() == 2 && apps_.lines().size() >= 3 &&
               apps_.runsByEventNumber().count(1) == 1 && archived() == 4;
      },
      seconds(60)))
      << relay->log() << "pending " << pending() << " dlq " << dlq_length() << " archived "
      << archived();
  const BinaryRun listed = runRelay({"dlq", "ls", "--json"}, env(uri));
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  const auto entries = nlohmann::json::parse(listed.out);
  ASSERT_EQ(entries.size(), 2U) << listed.out;
  const std::string id = entries[0]["id"];
  EXPECT_EQ(runRelay({"dlq", "inspect", id}, env(uri)).exit_code, 0);
  EXPECT_EQ(runRelay({"dlq", "rm", id}, env(uri)).exit_code, 0);
  EXPECT_EQ(dlq_length(), 1);
  const BinaryRun stats = runRelay({"stats", "--json"}, env(uri));
  EXPECT_EQ(stats.exit_code, 0) << stats.err;
  // The four events, never the schedule's occurrence.
  EXPECT_EQ(nlohmann::json::parse(stats.out)["archive"]["archives"][0]["entries"], 4) << stats.out;
  const BinaryRun health = runRelay({"health"}, {"RELAY_HTTP_ADDR=" + http_});
  EXPECT_EQ(health.exit_code, 0) << health.out << health.err;
  EXPECT_EQ(health.out.find("relay-pw"), std::string::npos);
  // Nothing Relay did was denied.
  auto denied = redis->command({"ACL", "LOG"});
  ASSERT_TRUE(denied.ok());
  std::string denials;
  for (size_t i = 0; i < denied->size(); ++i) {
    for (size_t j = 0; j + 1 < denied->at(i)->size(); j += 2) {
      auto name = denied->at(i)->at(j)->string();
      auto value = denied->at(i)->at(j + 1)->string();
      if (name.ok() && value.ok()) denials += std::string(*name) + "=" + std::string(*value) + " ";
    }
    denials += "\n";
  }
  EXPECT_EQ(denied->size(), 0U) << denials;
  EXPECT_EQ(relay->log().find("relay-pw"), std::string::npos);
}

}  // namespace
}  // namespace relay::testing
