#include "redis/reconnect.h"

#include <gtest/gtest.h>

namespace relay::redis {
namespace {

using std::chrono::milliseconds;

TEST(ReconnectBackoff, DoublesAfterEachFailureUpToTheCap) {
  Backoff backoff(milliseconds(100), milliseconds(500));
  EXPECT_EQ(backoff.wait(), milliseconds(100));
  EXPECT_EQ(backoff.next(), milliseconds(100));
  EXPECT_EQ(backoff.next(), milliseconds(200));
  EXPECT_EQ(backoff.next(), milliseconds(400));
  EXPECT_EQ(backoff.next(), milliseconds(500));
  EXPECT_EQ(backoff.next(), milliseconds(500));
  EXPECT_EQ(backoff.wait(), milliseconds(500));
}

TEST(ReconnectBackoff, StartsOverAfterASuccess) {
  Backoff backoff(milliseconds(100), milliseconds(5'000));
  (void)backoff.next();
  (void)backoff.next();
  backoff.reset();
  EXPECT_EQ(backoff.next(), milliseconds(100));
}

TEST(ReconnectBackoff, AnUncappedWaitSaturatesInsteadOfOverflowing) {
  Backoff backoff(milliseconds(100));
  for (int i = 0; i < 80; ++i) (void)backoff.next();
  EXPECT_EQ(backoff.wait(), milliseconds::max());
}

TEST(Reconnect, LeavesNoConnectionAndReportsWhyWhenNoServerAnswers) {
  // Port 1 on loopback: nothing listens there, so the connect is refused at once.
  auto endpoint = parseRedisUri("127.0.0.1:1");
  ASSERT_TRUE(endpoint.ok());
  std::unique_ptr<Connection> connection;
  const Status status = reconnect(connection, *endpoint);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().kind, ErrorKind::kIo) << status.error().message;
  EXPECT_EQ(connection, nullptr);
}

}  // namespace
}  // namespace relay::redis
