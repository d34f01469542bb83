#include <gtest/gtest.h>

#include <map>
#include <string>

#include "config/config.h"
#include "fakes/fake_environment.h"
#include "fakes/temp_dir.h"

namespace relay::config {
namespace {

using relay::testing::environmentOf;

TEST(RedisConfig, TheStreamIsTheClusterSlotKey) {
  auto config = loadConfig(environmentOf({{"REDIS_STREAM", "{orders}"}}), {}, "c");
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->redis.slot_key, "{orders}");
}

TEST(RedisConfig, TlsFilesComeFromTheEnvironment) {
  testing::TempDir dir;
  dir.write("ca.crt", "x");
  dir.write("client.crt", "x");
  dir.write("client.key", "x");
  auto config = loadConfig(environmentOf({{"REDIS_URI", "rediss://redis.internal:6380"},
                                          {"REDIS_TLS_CA", (dir.path() / "ca.crt").string()},
                                          {"REDIS_TLS_CERT", (dir.path() / "client.crt").string()},
                                          {"REDIS_TLS_KEY", (dir.path() / "client.key").string()},
                                          {"REDIS_TLS_SERVER_NAME", "redis.example.com"}}),
                           {}, "c");
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_TRUE(config->redis.tls);
  EXPECT_EQ(config->redis.tls_settings.ca_file, (dir.path() / "ca.crt").string());
  EXPECT_EQ(config->redis.tls_settings.key_file, (dir.path() / "client.key").string());
  EXPECT_EQ(config->redis.tls_settings.server_name, "redis.example.com");
}

TEST(RedisConfig, TlsSettingsWithoutRedissAreRefused) {
  auto config = loadConfig(
      environmentOf({{"REDIS_URI", "redis://h:1"}, {"REDIS_TLS_SERVER_NAME", "x"}}), {}, "c");
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.error().message.find("REDIS_TLS_SERVER_NAME"), std::string::npos);
  EXPECT_NE(config.error().message.find("rediss://"), std::string::npos);
}

TEST(RedisConfig, UnreadableTlsFileIsNamedBeforeRedisIsTouched) {
  auto config = loadConfig(
      environmentOf({{"REDIS_URI", "rediss://h:1"}, {"REDIS_TLS_CA", "/nonexistent/ca.crt"}}), {},
      "c");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_NE(config.error().message.find("REDIS_TLS_CA=\"/nonexistent/ca.crt\": cannot read"),
            std::string::npos)
      << config.error().message;
}

TEST(RedisConfig, ClientCertificateNeedsItsKey) {
  testing::TempDir dir;
  dir.write("client.crt", "x");
  auto config =
      loadConfig(environmentOf({{"REDIS_URI", "rediss://h:1"},
                                {"REDIS_TLS_CERT", (dir.path() / "client.crt").string()}}),
                 {}, "c");
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.error().message.find("REDIS_TLS_CERT and REDIS_TLS_KEY go together"),
            std::string::npos);
}

TEST(RedisConfig, ABadUriNeverEchoesThePassword) {
  auto config =
      loadConfig(environmentOf({{"REDIS_URI", "redis+sentinel://u:Hunter2@h:1"}}), {}, "c");
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.error().message.find("REDIS_URI"), std::string::npos);
  EXPECT_EQ(config.error().message.find("Hunter2"), std::string::npos);
}

}  // namespace
}  // namespace relay::config
