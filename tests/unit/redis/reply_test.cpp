#include "redis/reply.h"

#include <gtest/gtest.h>
#include <hiredict/hiredict.h>

#include <string>
#include <utility>

namespace relay::redis {
namespace {

using namespace std::string_view_literals;

// Builds a real hiredict reply tree from RESP bytes, as the connection would receive it.
Reply parse(std::string_view resp) {
  redictReader* reader = redictReaderCreate();
  EXPECT_EQ(redictReaderFeed(reader, resp.data(), resp.size()), REDICT_OK);
  void* raw = nullptr;
  EXPECT_EQ(redictReaderGetReply(reader, &raw), REDICT_OK);
  EXPECT_NE(raw, nullptr) << "incomplete RESP in test";
  redictReaderFree(reader);
  return Reply(static_cast<redictReply*>(raw));
}

TEST(Reply, BulkStringIsBinarySafe) {
  const Reply reply = parse("$7\r\na\0b\r\nc\0\r\n"sv);
  EXPECT_EQ(reply.type(), ReplyType::kString);
  ASSERT_TRUE(reply.string().ok());
  EXPECT_EQ(*reply.string(), "a\0b\r\nc\0"sv);
  ASSERT_TRUE(reply.optionalString().ok());
  EXPECT_EQ(reply.optionalString()->value(), "a\0b\r\nc\0"sv);
}

TEST(Reply, NilReadsAsNulloptOrAsAnError) {
  const Reply reply = parse("$-1\r\n");
  EXPECT_TRUE(reply.isNil());
  ASSERT_TRUE(reply.optionalString().ok());
  EXPECT_FALSE(reply.optionalString()->has_value());
  const auto string = reply.string();
  ASSERT_FALSE(string.ok());
  EXPECT_EQ(string.error().kind, ErrorKind::kProtocol);
  EXPECT_EQ(string.error().message, "expected a bulk string reply, got nil");
}

TEST(Reply, IntegerAndWrongTypeAccess) {
  const Reply reply = parse(":-42\r\n");
  ASSERT_TRUE(reply.integer().ok());
  EXPECT_EQ(*reply.integer(), -42);
  EXPECT_EQ(reply.string().error().message, "expected a bulk string reply, got integer");
  EXPECT_EQ(reply.status().error().kind, ErrorKind::kProtocol);
  EXPECT_EQ(reply.elements().error().message, "expected an array reply, got integer");
  EXPECT_EQ(reply.at(0).error().kind, ErrorKind::kProtocol);
  EXPECT_EQ(reply.size(), 0U);
}

TEST(Reply, StatusIsNotAString) {
  const Reply reply = parse("+OK\r\n");
  ASSERT_TRUE(reply.status().ok());
  EXPECT_EQ(*reply.status(), "OK");
  EXPECT_FALSE(reply.string().ok());
  EXPECT_FALSE(reply.optionalString().ok());
}

TEST(Reply, ErrorReplyConvertsToAReplyError) {
  const Reply reply = parse("-WRONGTYPE Operation against a key\r\n");
  EXPECT_TRUE(reply.isError());
  EXPECT_EQ(*reply.errorText(), "WRONGTYPE Operation against a key");
  const Error error = reply.toError();
  EXPECT_TRUE(isReplyError(error, "WRONGTYPE"));
  // Reading it as a value names the server's error to make the surprise debuggable.
  EXPECT_EQ(reply.integer().error().message,
            "expected an integer reply, got error 'WRONGTYPE Operation against a key'");
}

TEST(Reply, ToErrorOnANonErrorIsAProtocolError) {
  const Reply reply = parse(":1\r\n");
  EXPECT_EQ(reply.toError().kind, ErrorKind::kProtocol);
}

TEST(Reply, ArrayElementsAreTypedViews) {
  const Reply reply = parse("*4\r\n$3\r\nfoo\r\n$-1\r\n:7\r\n*1\r\n-ERR inner\r\n");
  ASSERT_TRUE(reply.isArray());
  EXPECT_EQ(reply.size(), 4U);
  const auto elements = reply.elements();
  ASSERT_TRUE(elements.ok());
  ASSERT_EQ(elements->size(), 4U);
  EXPECT_EQ(*(*elements)[0].string(), "foo");
  EXPECT_TRUE((*elements)[1].isNil());
  EXPECT_EQ(*(*elements)[2].integer(), 7);
  const auto nested = (*elements)[3].at(0);
  ASSERT_TRUE(nested.ok());
  EXPECT_TRUE(nested->isError());
  EXPECT_EQ(*nested->errorText(), "ERR inner");
}

TEST(Reply, OutOfRangeElementIsAnErrorNotACrash) {
  const Reply reply = parse("*1\r\n:1\r\n");
  const auto missing = reply.at(1);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "array reply has 1 elements, wanted element 1");
}

TEST(Reply, EmptyArrayHasNoElements) {
  const Reply reply = parse("*0\r\n");
  EXPECT_TRUE(reply.isArray());
  EXPECT_TRUE(reply.elements()->empty());
}

TEST(Reply, MovedFromReplyReadsAsNilAndTheTargetOwnsTheTree) {
  Reply source = parse("$2\r\nhi\r\n");
  Reply target = std::move(source);
  EXPECT_EQ(*target.string(), "hi");
  EXPECT_TRUE(source.isNil());  // NOLINT(bugprone-use-after-move): the documented state
  Reply other = parse(":5\r\n");
  other = std::move(target);
  EXPECT_EQ(*other.view().string(), "hi");
}

TEST(ReplyTypeName, NamesEveryType) {
  EXPECT_STREQ(replyTypeName(ReplyType::kString), "bulk string");
  EXPECT_STREQ(replyTypeName(ReplyType::kArray), "array");
  EXPECT_STREQ(replyTypeName(ReplyType::kInteger), "integer");
  EXPECT_STREQ(replyTypeName(ReplyType::kNil), "nil");
  EXPECT_STREQ(replyTypeName(ReplyType::kStatus), "status");
  EXPECT_STREQ(replyTypeName(ReplyType::kError), "error");
}

}  // namespace
}  // namespace relay::redis
