#include "http/address.h"

#include <gtest/gtest.h>

#include <string>

namespace relay::http {
namespace {

TEST(Address, AcceptsHostPortAndBracketedIpv6) {
  auto v4 = parseAddress("127.0.0.1:9464");
  ASSERT_TRUE(v4.ok());
  EXPECT_EQ(v4->host, "127.0.0.1");
  EXPECT_EQ(v4->port, 9464);
  auto v6 = parseAddress("[::1]:0");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 0);
  EXPECT_EQ(v6->toString(), "[::1]:0");
  auto name = parseAddress("localhost:80");
  ASSERT_TRUE(name.ok());
  EXPECT_EQ(name->toString(), "localhost:80");
}

TEST(Address, RejectsWhatIsNotHostColonPort) {
  for (const char* bad :
       {"", "9464", ":9464", "host:", "host:http", "host:-1", "host:65536", "::1:9464", "[::1]",
        "[::1]9464", "[127.0.0.1]:80", "[::1:80", "host name:80", "host/x:80"}) {
    auto parsed = parseAddress(bad);
    EXPECT_FALSE(parsed.ok()) << bad;
    if (!parsed.ok()) {
      EXPECT_NE(parsed.error().message.find("expected host:port"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace relay::http
