#include "runtime/egress_policy.h"

#include <gtest/gtest.h>

namespace relay::runtime {
namespace {

TEST(Cidr, ParsesBlocksAndSingleAddressesOfBothFamilies) {
  EXPECT_EQ(parseCidr("10.0.0.0/8")->text(), "10.0.0.0/8");
  EXPECT_EQ(parseCidr("192.0.2.7")->text(), "192.0.2.7/32");
  EXPECT_EQ(parseCidr("2001:db8::/32")->text(), "2001:db8::/32");
  EXPECT_EQ(parseCidr("fe80::1")->text(), "fe80::1/128");
  EXPECT_EQ(parseCidr("0.0.0.0/0")->text(), "0.0.0.0/0");
  EXPECT_TRUE(parseCidr("2001:db8::/32")->v6);
  EXPECT_FALSE(parseCidr("10.0.0.0/8")->v6);
}

TEST(Cidr, RefusesWhatIsNotABlock) {
  EXPECT_EQ(parseCidr("10.0.0.1/8").error().message,
            "\"10.0.0.1/8\" has bits set past its /8 prefix; write 10.0.0.0/8");
  EXPECT_EQ(parseCidr("example.com").error().message,
            "expected an IPv4 or IPv6 address block such as 10.0.0.0/8 or 2001:db8::/32, got "
            "\"example.com\"");
  EXPECT_FALSE(parseCidr("10.0.0.0/33").ok());
  EXPECT_FALSE(parseCidr("2001:db8::/129").ok());
  EXPECT_FALSE(parseCidr("10.0.0.0/").ok());
  EXPECT_FALSE(parseCidr("10.0.0.0/-1").ok());
  EXPECT_FALSE(parseCidr("10.0.0/8").ok());
}

TEST(PortRange, ParsesPortsAndRanges) {
  EXPECT_EQ(*parsePortRange("443"), (PortRange{443, 443}));
  EXPECT_EQ(*parsePortRange("8000-8080"), (PortRange{8000, 8080}));
  for (const char* bad : {"0", "65536", "80-79", "x", "", "1-", "-5", "1-2-3"}) {
    EXPECT_FALSE(parsePortRange(bad).ok()) << bad;
  }
}

TEST(EgressPolicy, RoundTripsThroughItsOneArgument) {
  EgressPolicy policy;
  policy.denied = linkLocalBlocks();
  policy.denied.push_back(*parseCidr("192.0.2.2"));
  policy.allow_list = true;
  policy.allowed = {{*parseCidr("203.0.113.0/24"), {{443, 443}, {8000, 8080}}},
                    {*parseCidr("2001:db8::/32"), {}}};
  const std::string text = encodeEgressPolicy(policy);
  EXPECT_EQ(text,
            "deny 169.254.0.0/16;deny fe80::/10;deny 192.0.2.2/32;allow 203.0.113.0/24 "
            "443-443,8000-8080;allow 2001:db8::/32;only");
  EXPECT_EQ(*decodeEgressPolicy(text), policy);
  EXPECT_EQ(*decodeEgressPolicy(""), EgressPolicy{});
  for (const char* bad : {"deny", "permit 10.0.0.0/8", "deny 10.0.0.0/8 80", "allow x"}) {
    EXPECT_FALSE(decodeEgressPolicy(bad).ok()) << bad;
  }
}

TEST(EgressPolicy, HostAddressesLeaveLoopbackOut) {
  for (const Cidr& own : hostAddresses()) {
    EXPECT_NE(own.text(), "127.0.0.1/32");
    EXPECT_NE(own.text(), "::1/128");
    EXPECT_EQ(own.prefix, own.v6 ? 128 : 32);
  }
}

}  // namespace
}  // namespace relay::runtime
