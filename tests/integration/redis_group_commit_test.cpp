// redis::GroupCommit against a real redis-server: calls made while a pipeline is in flight go
// together in the next one, each with its own reply; failures reach every call of their
// pipeline and the next call connects again.
#include "redis/group_commit.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "common/system_clock.h"
#include "fakes/fake_clock.h"
#include "support/redis_server.h"
#include "support/spawned_process.h"

namespace relay::redis {
namespace {

using testing::RedisTest;
using RedisGroupCommit = RedisTest;

// A command timeout above the BLPOPs below: they hold a pipeline, never time out.
ConnectionSettings patient() {
  ConnectionSettings settings;
  settings.command_timeout = std::chrono::seconds(60);
  return settings;
}

bool waitFor(const std::function<bool()>& condition) {
  return relay::testing::SpawnedProcess::waitUntil(condition, std::chrono::seconds(10));
}

long long blockedClients(Connection& redis) {
  auto info = redis.command({"INFO", "clients"});
  if (!info.ok() || !info->string().ok()) return -1;
  const std::string text(*info->string());
  const std::size_t at = text.find("blocked_clients:");
  return at == std::string::npos ? -1 : std::stoll(text.substr(at + 16));
}

TEST_F(RedisGroupCommit, ACallAloneIsSentAtOnce) {
  SystemClock clock;
  GroupCommit group(server().endpoint(), {}, clock);
  auto reply = group.call({"ECHO", "alone"});
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  EXPECT_EQ(*reply->string(), "alone");
  EXPECT_EQ(group.counts().pipelines, 1u);
  EXPECT_EQ(group.counts().calls, 1u);
}

// A pipeline held in flight by a BLPOP: the calls made meanwhile wait, then go in one pipeline
// that the first of them sends; each gets its own reply, an error reply only its own call.
TEST_F(RedisGroupCommit, CallsMadeWhileAPipelineIsInFlightShareTheNextOneEachWithItsReply) {
  auto redis = server().connect();
  ASSERT_TRUE(redis->command({"SET", "text", "not a number"}).ok());
  SystemClock clock;
  GroupCommit group(server().endpoint(), patient(), clock);
  Result<Reply> held = Error{ErrorKind::kClosed, "not called"};
  std::thread holder([&] { held = group.call({"BLPOP", "gate", "30"}); });
  ASSERT_TRUE(waitFor([&] { return blockedClients(*redis) == 1; }));

  constexpr int kCallers = 12;
  std::vector<Result<Reply>> replies;
  for (int i = 0; i < kCallers; ++i) replies.emplace_back(Error{ErrorKind::kClosed, "not called"});
  std::vector<std::thread> callers;
  for (int i = 0; i < kCallers; ++i) {
    callers.emplace_back([&, i] {
      replies[i] = i == 5 ? group.call({"INCR", "text"}) : group.call({"ECHO", std::to_string(i)});
    });
  }
  ASSERT_TRUE(waitFor([&] { return group.waiting() == kCallers; }));
  EXPECT_EQ(group.counts().pipelines, 0u);  // nothing answered while the BLPOP holds
  ASSERT_TRUE(redis->command({"LPUSH", "gate", "open"}).ok());
  holder.join();
  for (std::thread& caller : callers) caller.join();

  ASSERT_TRUE(held.ok()) << held.error().message;
  EXPECT_EQ(*held->at(1)->string(), "open");
  for (int i = 0; i < kCallers; ++i) {
    if (i == 5) {
      ASSERT_FALSE(replies[i].ok());
      EXPECT_EQ(replies[i].error().kind, ErrorKind::kReply);
      continue;
    }
    ASSERT_TRUE(replies[i].ok()) << i << ": " << replies[i].error().message;
    EXPECT_EQ(*replies[i]->string(), std::to_string(i));
  }
  EXPECT_EQ(group.counts().pipelines, 2u);
  EXPECT_EQ(group.counts().calls, kCallers + 1u);
  EXPECT_EQ(group.waiting(), 0u);
}

// Many threads calling at once, in and out of pipelines of every size: each call gets its own
// reply, none is lost or answered twice.
TEST_F(RedisGroupCommit, EveryCallOfManyThreadsGetsItsOwnReply) {
  SystemClock clock;
  GroupCommit group(server().endpoint(), {}, clock);
  constexpr int kThreads = 8;
  constexpr int kCalls = 300;
  std::vector<int> wrong(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCalls; ++i) {
        const std::string payload = std::to_string(t) + ":" + std::to_string(i);
        auto reply = group.call({"ECHO", payload});
        if (!reply.ok() || *reply->string() != payload) ++wrong[t];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(wrong[t], 0) << "thread " << t;
  EXPECT_EQ(group.counts().calls, std::uint64_t{kThreads * kCalls});
  EXPECT_EQ(group.waiting(), 0u);
}

TEST_F(RedisGroupCommit, AKilledConnectionFailsItsCallAndTheNextCallConnectsAgain) {
  auto redis = server().connect();
  SystemClock clock;
  GroupCommit group(server().endpoint(), {}, clock, std::chrono::milliseconds(0));
  ASSERT_TRUE(group.call({"PING"}).ok());
  ASSERT_TRUE(redis->command({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"}).ok());
  auto lost = group.call({"ECHO", "lost"});
  ASSERT_FALSE(lost.ok());
  EXPECT_NE(lost.error().kind, ErrorKind::kReply);  // the transport's failure, for the caller
  auto again = group.call({"ECHO", "again"});
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(*again->string(), "again");
}

// After a transport failure the group rests: calls fail at once, unsent, so that nobody queues
// behind a dead connection; a connection that cannot be made is kClosed (never a reply to the
// caller's command); after the rest the next call connects again.
TEST_F(RedisGroupCommit, AfterATransportFailureCallsFailAtOnceUntilTheRestIsOver) {
  relay::testing::FakeClock clock;
  GroupCommit group(server().endpoint(), {}, clock, std::chrono::seconds(1));
  ASSERT_TRUE(group.call({"PING"}).ok());
  ASSERT_TRUE(server().stop().ok());
  auto gone = group.call({"PING"});
  ASSERT_FALSE(gone.ok());
  EXPECT_NE(gone.error().kind, ErrorKind::kReply);
  EXPECT_EQ(group.counts().pipelines, 2u);

  auto resting = group.call({"PING"});
  ASSERT_FALSE(resting.ok());
  EXPECT_EQ(resting.error().kind, ErrorKind::kClosed);
  EXPECT_NE(resting.error().message.find("not sent"), std::string::npos) << resting.error().message;
  EXPECT_EQ(group.counts().pipelines, 2u);  // nothing was tried

  clock.advance(std::chrono::seconds(1));
  auto refused = group.call({"PING"});  // tried: nobody listens
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind, ErrorKind::kClosed);
  EXPECT_NE(refused.error().message.find("no connection"), std::string::npos)
      << refused.error().message;
  EXPECT_EQ(group.counts().pipelines, 3u);

  ASSERT_TRUE(server().start().ok());
  EXPECT_FALSE(group.call({"PING"}).ok());  // still resting after the refusal
  clock.advance(std::chrono::seconds(1));
  auto back = group.call({"ECHO", "back"});
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back->string(), "back");
}

}  // namespace
}  // namespace relay::redis
