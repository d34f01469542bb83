#include "tracing/trace_context.h"

#include <gtest/gtest.h>

namespace relay::tracing {
namespace {

constexpr const char* kValid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

TEST(Traceparent, ParsesVersion00AndRendersItBack) {
  auto context = parseTraceparent(kValid);
  ASSERT_TRUE(context.ok()) << context.error().message;
  EXPECT_EQ(context->traceIdHex(), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(context->parentIdHex(), "00f067aa0ba902b7");
  EXPECT_TRUE(context->sampled());
  EXPECT_EQ(context->traceparent(), kValid);
}

TEST(Traceparent, UnsampledFlagIsKept) {
  auto context = parseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
  ASSERT_TRUE(context.ok());
  EXPECT_FALSE(context->sampled());
}

TEST(Traceparent, FutureVersionMayCarryMoreFields) {
  auto context =
      parseTraceparent("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-the-future");
  ASSERT_TRUE(context.ok()) << context.error().message;
  EXPECT_EQ(context->traceparent(), kValid);  // a child gets the version we speak
}

TEST(Traceparent, RejectsEveryMalformedShapeWithAReason) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "too short"},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7", "too short"},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-", "exactly 55"},
      {"00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "separated"},
      {"0g-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "version"},
      {"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "ff is forbidden"},
      {"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", "trace id"},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-00F067AA0BA902B7-01", "parent id"},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0x", "flags"},
      {"00-00000000000000000000000000000000-00f067aa0ba902b7-01", "trace id is all zeros"},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", "parent id is all zeros"},
      {"cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x", "must start with '-'"},
  };
  for (const auto& [text, why] : cases) {
    auto context = parseTraceparent(text);
    ASSERT_FALSE(context.ok()) << text;
    EXPECT_NE(context.error().message.find(why), std::string::npos)
        << text << ": " << context.error().message;
  }
}

TEST(Tracestate, AcceptsTheW3cExamples) {
  for (const char* text : {"", "congo=t61rcWkgMzE", "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE",
                           "a@b=1 , c=2,,d/e*f-g_h=x y", "0tenant@vendor-1=v"}) {
    EXPECT_TRUE(checkTracestate(text).ok())
        << text << ": " << checkTracestate(text).error().message;
  }
}

TEST(Tracestate, RejectsBadKeysValuesAndSizes) {
  std::string many;
  for (int i = 0; i < 33; ++i) many += "k" + std::to_string(i) + "=v,";
  for (const std::string& text :
       {std::string("Upper=1"), std::string("k"), std::string("=v"), std::string("k=a,b"),
        std::string("k=v=w"), std::string("k=\x01"), std::string("_k=1"), std::string("a@=1"),
        std::string(513, 'a'), many}) {
    EXPECT_FALSE(checkTracestate(text).ok()) << text;
  }
}

}  // namespace
}  // namespace relay::tracing
