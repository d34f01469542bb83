// A destroyed consumer group is re-created where it stood, not at 0 (docs/operations.md
// "A destroyed consumer group"), against a real redis-server.
#include "stream/group_keeper.h"

#include <gtest/gtest.h>

#include "support/redis_server.h"

namespace relay::stream {
namespace {

class GroupKeeper : public relay::testing::RedisTest {
 protected:
  void SetUp() override {
    RedisTest::SetUp();
    redis_ = server().connect();
  }
  std::string lastDelivered() {
    auto groups = redis_->command({"XINFO", "GROUPS", "events"});
    for (std::size_t i = 0; i < groups->size(); ++i) {
      auto group = groups->at(i);
      for (std::size_t f = 0; f + 1 < group->size(); f += 2) {
        if (*group->at(f)->string() == "last-delivered-id") {
          return std::string(*group->at(f + 1)->string());
        }
      }
    }
    return "";
  }
  std::string field(const std::string& name) {
    auto value = redis_->command({"HGET", keys_.groupRecord(), name});
    return value.ok() && !value->isNil() ? std::string(*value->string()) : "";
  }

  invocation::StreamKeys keys_{"events", "relay"};
  std::unique_ptr<redis::Connection> redis_;
};

TEST_F(GroupKeeper, TheFirstCreationIsAtZeroAndAnExistingGroupIsLeftAlone) {
  auto created = ensureGroup(*redis_, keys_);
  ASSERT_TRUE(created.ok()) << created.error().message;
  EXPECT_EQ(created->kind, GroupEnsured::Kind::kCreated);
  EXPECT_EQ(lastDelivered(), "0-0");
  EXPECT_EQ(field("position"), "0-0");
  ASSERT_TRUE(redis_->command({"XADD", "events", "5-0", "event", "{}"}).ok());
  ASSERT_TRUE(
      redis_->command({"XREADGROUP", "GROUP", "relay", "c", "STREAMS", "events", ">"}).ok());
  auto again = ensureGroup(*redis_, keys_);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->kind, GroupEnsured::Kind::kExisted);
  EXPECT_EQ(lastDelivered(), "5-0");
  EXPECT_EQ(field("unreported"), "");
}

TEST_F(GroupKeeper, ADestroyedGroupComesBackAtItsRecordedPositionAndIsReportedOnce) {
  ASSERT_TRUE(ensureGroup(*redis_, keys_).ok());
  for (const char* id : {"1-0", "2-0", "3-0", "4-0"}) {
    ASSERT_TRUE(redis_->command({"XADD", "events", id, "event", "{}"}).ok());
  }
  ASSERT_TRUE(
      redis_->command({"XREADGROUP", "GROUP", "relay", "c", "STREAMS", "events", ">"}).ok());
  ASSERT_TRUE(redis_->command({"XACK", "events", "relay", "1-0", "2-0", "4-0"}).ok());
  // The housekeeper records the position: 3-0 is still pending, so just before it.
  ASSERT_TRUE(
      recordGroupPosition(*redis_, keys_, *StreamId::parse("4-0"), StreamId::parse("3-0")).ok());
  EXPECT_EQ(field("position"), "2-18446744073709551615");
  EXPECT_EQ(field("last_delivered"), "4-0");
  ASSERT_TRUE(redis_->command({"XGROUP", "DESTROY", "events", "relay"}).ok());
  auto recreated = ensureGroup(*redis_, keys_);
  ASSERT_TRUE(recreated.ok()) << recreated.error().message;
  EXPECT_EQ(recreated->kind, GroupEnsured::Kind::kRecreated);
  EXPECT_EQ(recreated->at, "2-18446744073709551615");
  // What was not acknowledged (3-0) and what came after is delivered again, the rest is not.
  auto read = redis_->command({"XREADGROUP", "GROUP", "relay", "c", "STREAMS", "events", ">"});
  ASSERT_TRUE(read.ok());
  auto entries = read->at(0)->at(1);
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_EQ(*entries->at(0)->at(0)->string(), "3-0");
  EXPECT_EQ(*entries->at(1)->at(0)->string(), "4-0");
  auto first = takeRecreation(*redis_, keys_);
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(*first);
  EXPECT_EQ((*first)->at, "2-18446744073709551615");
  EXPECT_GT((*first)->when_ms, 0);
  auto second = takeRecreation(*redis_, keys_);
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(*second) << "exactly one worker reports it";
}

TEST_F(GroupKeeper, AnUnusableRecordIsAnErrorThatSaysWhatToDo) {
  ASSERT_TRUE(redis_->command({"HSET", keys_.groupRecord(), "position", "junk"}).ok());
  auto failed = ensureGroup(*redis_, keys_);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.error().message.find("DEL it"), std::string::npos) << failed.error().message;
  ASSERT_TRUE(redis_->command({"DEL", keys_.groupRecord()}).ok());
  auto created = ensureGroup(*redis_, keys_);
  ASSERT_TRUE(created.ok());
  EXPECT_EQ(created->kind, GroupEnsured::Kind::kCreated);
}

TEST(ResumePosition, JustBeforeTheOldestPendingEntryElseTheLastDelivered) {
  const auto id = [](const char* text) { return *StreamId::parse(text); };
  EXPECT_EQ(resumePosition(id("9-0"), std::nullopt), id("9-0"));
  EXPECT_EQ(resumePosition(id("9-0"), id("5-3")), id("5-2"));
  EXPECT_EQ(resumePosition(id("9-0"), id("5-0")), (StreamId{4, UINT64_MAX}));
  EXPECT_EQ(resumePosition(id("9-0"), id("0-0")), id("0-0"));
}

}  // namespace
}  // namespace relay::stream
