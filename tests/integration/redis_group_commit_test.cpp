// redis::GroupCommit against a real redis-server: calls made while a pipeline is in flight go
// together in the next one, each with its own reply; failures reach every call of their
// pipeline and the next call connects again.
#include "redis/group_commit.h"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "support/redis_server.h"
#include "support/spawned_process.h"

namespace relay::redis {
namespace {

using testing::RedisTest;
using RedisGroupCommit = RedisTest;

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
  GroupCommit group(server().endpoint(), {});
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
  ConnectionSettings patient;  // above the BLPOP: it holds the pipeline, never times out
  patient.command_timeout = std::chrono::seconds(60);
  GroupCommit group(server().endpoint(), patient);
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

TEST_F(RedisGroupCommit, AKilledConnectionFailsItsCallAndTheNextCallConnectsAgain) {
  auto redis = server().connect();
  GroupCommit group(server().endpoint(), {});
  ASSERT_TRUE(group.call({"PING"}).ok());
  ASSERT_TRUE(redis->command({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"}).ok());
  auto lost = group.call({"ECHO", "lost"});
  ASSERT_FALSE(lost.ok());
  EXPECT_NE(lost.error().kind, ErrorKind::kReply);  // the transport's failure, for the caller
  auto again = group.call({"ECHO", "again"});
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(*again->string(), "again");
}

TEST_F(RedisGroupCommit, AServerGoneFailsTheCallAndOneBackAnswersTheNext) {
  GroupCommit group(server().endpoint(), {});
  ASSERT_TRUE(group.call({"PING"}).ok());
  ASSERT_TRUE(server().stop().ok());
  auto gone = group.call({"PING"});
  ASSERT_FALSE(gone.ok());
  EXPECT_NE(gone.error().kind, ErrorKind::kReply);
  ASSERT_TRUE(server().start().ok());
  auto back = group.call({"ECHO", "back"});
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back->string(), "back");
}

}  // namespace
}  // namespace relay::redis
