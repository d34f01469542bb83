#include "redis/errors.h"

#include <gtest/gtest.h>
#include <hiredict/read.h>

#include <cerrno>
#include <memory>

namespace relay::redis {
namespace {

TEST(ErrorFromContext, EofMeansTheServerClosedTheConnection) {
  const Error error = errorFromContext(REDICT_ERR_EOF, "Server closed the connection", 0, "h:1");
  EXPECT_EQ(error.kind, ErrorKind::kClosed);
  EXPECT_EQ(error.message, "h:1: Server closed the connection");
}

TEST(ErrorFromContext, IoErrorWithEagainIsATimeout) {
  // hiredict reports an expired SO_RCVTIMEO as REDICT_ERR_IO; errno tells it apart.
  EXPECT_EQ(errorFromContext(REDICT_ERR_IO, "Resource temporarily unavailable", EAGAIN, "h:1").kind,
            ErrorKind::kTimeout);
  EXPECT_EQ(errorFromContext(REDICT_ERR_IO, "Connection timed out", ETIMEDOUT, "h:1").kind,
            ErrorKind::kTimeout);
}

TEST(ErrorFromContext, OtherIoErrorsAreIo) {
  EXPECT_EQ(errorFromContext(REDICT_ERR_IO, "Connection refused", ECONNREFUSED, "h:1").kind,
            ErrorKind::kIo);
  EXPECT_EQ(errorFromContext(REDICT_ERR_IO, "Connection reset by peer", ECONNRESET, "h:1").kind,
            ErrorKind::kIo);
  EXPECT_EQ(errorFromContext(REDICT_ERR_OTHER, "Name or service not known", 0, "h:1").kind,
            ErrorKind::kIo);
}

TEST(ErrorFromContext, ProtocolErrorIsProtocol) {
  EXPECT_EQ(errorFromContext(REDICT_ERR_PROTOCOL, "Protocol error, got \"x\"", 0, "h:1").kind,
            ErrorKind::kProtocol);
}

TEST(ErrorFromContext, EmptyErrstrStillSaysSomething) {
  EXPECT_EQ(errorFromContext(REDICT_ERR_IO, "", 0, "").message, "unknown hiredict error");
}

TEST(IsReplyError, MatchesTheFirstWordOfAReplyErrorOnly) {
  const Error busy = errorFromReply("BUSYGROUP Consumer Group name already exists");
  EXPECT_EQ(busy.kind, ErrorKind::kReply);
  EXPECT_TRUE(isReplyError(busy, "BUSYGROUP"));
  EXPECT_FALSE(isReplyError(busy, "BUSY"));
  EXPECT_FALSE(isReplyError(busy, ""));
  EXPECT_EQ(replyErrorCode(busy), "BUSYGROUP");
  EXPECT_TRUE(isReplyError(errorFromReply("NOSCRIPT"), "NOSCRIPT"));
}

TEST(IsReplyError, NeverMatchesTransportErrorsWithTheSameText) {
  const Error io{ErrorKind::kIo, "NOSCRIPT looks like a reply but is not"};
  EXPECT_FALSE(isReplyError(io, "NOSCRIPT"));
  EXPECT_EQ(replyErrorCode(io), "");
}

TEST(ToRelay, MapsKindsForModulesThatSpeakRelayResult) {
  EXPECT_EQ(Error({ErrorKind::kIo, "x"}).toRelay().kind, relay::ErrorKind::kUnavailable);
  EXPECT_EQ(Error({ErrorKind::kClosed, "x"}).toRelay().kind, relay::ErrorKind::kUnavailable);
  EXPECT_EQ(Error({ErrorKind::kTimeout, "x"}).toRelay().kind, relay::ErrorKind::kTimeout);
  EXPECT_EQ(Error({ErrorKind::kProtocol, "x"}).toRelay().kind, relay::ErrorKind::kInternal);
  const relay::Error reply = errorFromReply("WRONGTYPE Operation").toRelay();
  EXPECT_EQ(reply.kind, relay::ErrorKind::kInternal);
  EXPECT_EQ(reply.message, "redis: WRONGTYPE Operation");
}

TEST(ToRelay, CarriesValuesAndErrorsAcross) {
  const relay::Result<int> value = toRelay(Result<int>(7));
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(*value, 7);
  const relay::Result<std::unique_ptr<int>> moved =
      toRelay(Result<std::unique_ptr<int>>(std::make_unique<int>(3)));
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(**moved, 3);
  const relay::Status failed = toRelay(Status(Error{ErrorKind::kTimeout, "slow"}));
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().kind, relay::ErrorKind::kTimeout);
  EXPECT_TRUE(toRelay(Status()).ok());
}

TEST(ErrorKindName, NamesEveryKind) {
  EXPECT_STREQ(errorKindName(ErrorKind::kIo), "i/o");
  EXPECT_STREQ(errorKindName(ErrorKind::kTimeout), "timeout");
  EXPECT_STREQ(errorKindName(ErrorKind::kClosed), "closed");
  EXPECT_STREQ(errorKindName(ErrorKind::kProtocol), "protocol");
  EXPECT_STREQ(errorKindName(ErrorKind::kReply), "reply");
}

}  // namespace
}  // namespace relay::redis
