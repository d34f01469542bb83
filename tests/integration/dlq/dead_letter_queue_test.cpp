// Filtered listing, pagination, totals, selection bounds and removal of dead-letter entries
// against a real redis-server.
#include "dlq/dead_letter_queue.h"

#include <gtest/gtest.h>

#include "support/redis_server.h"

namespace relay::testing {
namespace {

using dlq::DeadLetterQueue;
using dlq::DlqFilter;

class DeadLetterQueueTest : public RedisTest {
 protected:
  void SetUp() override {
    RedisTest::SetUp();
    redis_ = server().connect();
  }
  // Adds an entry with an explicit id (`<ms>-0`) so time ranges are exact.
  std::string add(long long ms, const std::string& app, const std::string& event,
                  const std::string& reason = "exit 3") {
    const std::string id = std::to_string(ms) + "-0";
    auto reply =
        redis_->command({"XADD", kKey, id, "event", event, "reason", reason, "kind", "handler",
                         "app", app, "handler", "bin/h.sh", "handler_attempts", "5"});
    EXPECT_TRUE(reply.ok()) << reply.error().message;
    return id;
  }
  std::vector<std::string> ids(const std::vector<dlq::Entry>& entries) {
    std::vector<std::string> out;
    for (const auto& entry : entries) out.push_back(entry.id());
    return out;
  }

  static constexpr const char* kKey = "relay:events:dlq";
  std::unique_ptr<redis::Connection> redis_;
};

TEST_F(DeadLetterQueueTest, AnEmptyQueueHasNoPageAndNoSelection) {
  DeadLetterQueue queue(*redis_, kKey);
  auto page = queue.page({}, "", "", 10);
  ASSERT_TRUE(page.ok()) << page.error().message;
  EXPECT_TRUE(page->entries.empty());
  EXPECT_EQ(page->total, 0);
  EXPECT_EQ(page->next, "");
  auto selection = queue.select({}, "");
  ASSERT_TRUE(selection.ok());
  EXPECT_TRUE(selection->ids.empty());
}

TEST_F(DeadLetterQueueTest, PagesGoNewestFirstAndCountTheWholeSelection) {
  // A batch of 3 makes the scan cross several XREVRANGE reads.
  DeadLetterQueue queue(*redis_, kKey, /*batch=*/3);
  for (int i = 1; i <= 10; ++i)
    add(1000 + i, i % 2 ? "odd" : "even", "{\"n\":" + std::to_string(i) + "}");
  const DlqFilter odd{.app = "odd"};
  auto first = queue.page(odd, "", "", 2);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->total, 5);
  EXPECT_EQ(ids(first->entries), (std::vector<std::string>{"1009-0", "1007-0"}));
  EXPECT_EQ(first->next, "1007-0");
  EXPECT_EQ(first->upto, "1010-0");
  auto second = queue.page(odd, first->upto, first->next, 2);
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(ids(second->entries), (std::vector<std::string>{"1005-0", "1003-0"}));
  EXPECT_EQ(second->total, 5);
  auto last = queue.page(odd, first->upto, second->next, 2);
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(ids(last->entries), (std::vector<std::string>{"1001-0"}));
  EXPECT_EQ(last->next, "");  // nothing after it
}

TEST_F(DeadLetterQueueTest, EntriesArrivingAfterTheFirstPageStayOutOfItsSelection) {
  DeadLetterQueue queue(*redis_, kKey);
  add(1000, "shop", "{}");
  add(2000, "shop", "{}");
  auto first = queue.page({}, "", "", 1);
  ASSERT_TRUE(first.ok());
  add(3000, "shop", "{}");
  auto again = queue.page({}, first->upto, "", 10);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->total, 2);
  EXPECT_EQ(ids(again->entries), (std::vector<std::string>{"2000-0", "1000-0"}));
  auto selection = queue.select({}, first->upto);
  ASSERT_TRUE(selection.ok());
  EXPECT_EQ(selection->ids, (std::vector<std::string>{"2000-0", "1000-0"}));
}

TEST_F(DeadLetterQueueTest, TheTimeRangeAndTextSearchNarrowTheSelection) {
  DeadLetterQueue queue(*redis_, kKey, /*batch=*/2);
  add(1000, "shop", R"({"order":"A-1"})");
  add(2000, "shop", R"({"order":"B-2"})");
  add(3000, "shop", R"({"order":"a-3"})");
  add(4000, "shop", R"({"order":"A-4"})");
  auto selection = queue.select({.text = "\"a-", .since_ms = 1500, .until_ms = 3500}, "");
  ASSERT_TRUE(selection.ok());
  EXPECT_EQ(selection->ids, (std::vector<std::string>{"3000-0"}));
  auto page = queue.page({.until_ms = 2000}, "", "", 10);
  ASSERT_TRUE(page.ok()) << page.error().message;
  EXPECT_EQ(ids(page->entries), (std::vector<std::string>{"2000-0", "1000-0"}));
}

TEST_F(DeadLetterQueueTest, FindAndRemoveWorkOnExactIds) {
  DeadLetterQueue queue(*redis_, kKey, /*batch=*/2);
  const std::string a = add(1000, "shop", "{}");
  const std::string b = add(2000, "shop", "{}");
  const std::string c = add(3000, "shop", "{}");
  auto found = queue.find(b);
  ASSERT_TRUE(found.ok());
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->app(), "shop");
  EXPECT_EQ((*found)->kind, dlq::DlqKind::kHandler);
  EXPECT_EQ((*found)->handler_attempts, 5);
  auto missing = queue.find("5-5");
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());
  auto removed = queue.remove({a, c, "9-9"});
  ASSERT_TRUE(removed.ok());
  EXPECT_EQ(*removed, 2);
  EXPECT_EQ(*queue.length(), 1);
}

// Issue 29 item 1: readers of the DLQ hold no more than the limits they are given (by default
// MAX_EVENT_BYTES's default); a huge entry arrives as its first bytes and its size, and cannot
// be replayed.
TEST_F(DeadLetterQueueTest, AHugeEntryIsReadCutAndCannotBeReplayed) {
  const std::string huge(4 << 20, 'x');
  const std::string big = add(1000, "shop", huge);
  const std::string small = add(2000, "shop", "{}");
  DeadLetterQueue queue(*redis_, kKey);
  auto found = queue.find(big);
  ASSERT_TRUE(found.ok()) << found.error().message;
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->event().size(), 256u);
  ASSERT_EQ((*found)->record.cut.size(), 1u);
  EXPECT_EQ((*found)->record.cut.front(),
            (std::pair<std::string, std::uint64_t>{"event", huge.size()}));
  ASSERT_TRUE((*found)->refusal().has_value());
  EXPECT_NE((*found)->refusal()->find("cannot be replayed"), std::string::npos);
  auto page = queue.page({}, "", "", 10);
  ASSERT_TRUE(page.ok()) << page.error().message;
  ASSERT_EQ(ids(page->entries), (std::vector<std::string>{small, big}));
  EXPECT_FALSE(page->entries[0].refusal().has_value());
  EXPECT_EQ(page->entries[1].event().size(), 256u);
  // Larger limits (a larger MAX_EVENT_BYTES) read it whole.
  DeadLetterQueue wide(*redis_, kKey, 500, stream::entryReplyLimits(8 << 20));
  EXPECT_EQ((*wide.find(big))->event().size(), huge.size());
}

}  // namespace
}  // namespace relay::testing
