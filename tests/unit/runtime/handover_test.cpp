#include "runtime/handover.h"

#include <gtest/gtest.h>

namespace relay::runtime {
namespace {

TEST(Handover, RoundTripsArgvAndEnvironment) {
  const Handover sent{{"/app/bin/run", "a b", ""}, {"PATH=/usr/bin", "RELAY_ATTEMPT=2", "E="}};
  const std::string bytes = encodeHandover(sent);
  const std::size_t newline = bytes.find('\n');
  ASSERT_NE(newline, std::string::npos);
  EXPECT_LE(newline, kMaxHandoverHeader);
  auto header = decodeHandoverHeader(std::string_view(bytes).substr(0, newline));
  ASSERT_TRUE(header.ok()) << header.error().message;
  EXPECT_EQ(header->argc, 3u);
  EXPECT_EQ(header->envc, 3u);
  auto received = decodeHandoverPayload(*header, std::string_view(bytes).substr(newline + 1));
  ASSERT_TRUE(received.ok()) << received.error().message;
  EXPECT_EQ(received->argv, sent.argv);
  EXPECT_EQ(received->env, sent.env);
}

TEST(Handover, RejectsWhatIsNotAHandover) {
  EXPECT_FALSE(decodeHandoverHeader("{\"event\":1}").ok());
  EXPECT_FALSE(decodeHandoverHeader("RELAY-HANDOVER 1 0 0 0").ok());  // no argv
  EXPECT_FALSE(decodeHandoverHeader("RELAY-HANDOVER 1 1 0 x").ok());
  EXPECT_FALSE(decodeHandoverHeader("RELAY-HANDOVER 1 1 0 99999999999").ok());  // too large
  auto header = decodeHandoverHeader("RELAY-HANDOVER 1 1 1 4");
  ASSERT_TRUE(header.ok());
  EXPECT_FALSE(decodeHandoverPayload(*header, std::string("ab\0", 3)).ok());   // size differs
  EXPECT_FALSE(decodeHandoverPayload(*header, std::string("abc\0", 4)).ok());  // no env string
  EXPECT_FALSE(decodeHandoverPayload(*header, std::string("a\0bc", 4)).ok());  // unterminated
}

}  // namespace
}  // namespace relay::runtime
