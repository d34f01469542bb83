#include "invocation/message.h"

#include <gtest/gtest.h>

namespace relay::invocation {
namespace {

TEST(Message, FindAndValueOfGiveTheFirstValueOfAField) {
  const Message message{"1-0", {{"event", "{}"}, {"app", "a"}, {"app", "b"}, {"empty", ""}}};
  ASSERT_NE(message.find("app"), nullptr);
  EXPECT_EQ(*message.find("app"), "a");
  EXPECT_EQ(message.valueOf("app"), "a");
  EXPECT_EQ(message.valueOf("event"), "{}");
  EXPECT_EQ(message.find("missing"), nullptr);
  EXPECT_EQ(message.valueOf("missing"), "");
  EXPECT_NE(message.find("empty"), nullptr);  // present and empty: find tells it apart
  EXPECT_EQ(message.valueOf("empty"), "");
}

}  // namespace
}  // namespace relay::invocation
