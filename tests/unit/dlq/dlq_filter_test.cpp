// Which dead-letter entries a filter selects: exact app/handler/kind, case-insensitive reason and
// event text, a time range over the entry ids.
#include "dlq/dlq_filter.h"

#include <gtest/gtest.h>

namespace relay::dlq {
namespace {

Entry entry(std::string id, std::string app, std::string handler, std::string reason,
            std::string event, std::string kind = "handler") {
  return Entry::from({std::move(id),
                      {{"event", std::move(event)},
                       {"reason", std::move(reason)},
                       {"kind", std::move(kind)},
                       {"app", std::move(app)},
                       {"handler", std::move(handler)},
                       {"handler_attempts", "5"}}});
}

const Entry kShop =
    entry("1000-0", "shop", "bin/pay.sh", "exit 3", R"({"order":"A-17","note":"Ünïcode"})");
const Entry kMalformed =
    entry("2000-5", "-", "-", "malformed: invalid JSON", "{oops <script>", "malformed");

TEST(DlqFilter, TheEmptyFilterSelectsEverything) {
  EXPECT_TRUE((DlqFilter{}.matches(kShop)));
  EXPECT_TRUE((DlqFilter{}.matches(kMalformed)));
}

TEST(DlqFilter, AppAndHandlerAreExactNames) {
  EXPECT_TRUE((DlqFilter{.app = "shop"}.matches(kShop)));
  EXPECT_FALSE((DlqFilter{.app = "sho"}.matches(kShop)));
  EXPECT_FALSE((DlqFilter{.app = "SHOP"}.matches(kShop)));
  EXPECT_TRUE((DlqFilter{.app = "shop", .handler = "bin/pay.sh"}.matches(kShop)));
  EXPECT_FALSE((DlqFilter{.app = "shop", .handler = "bin/pay"}.matches(kShop)));
  EXPECT_TRUE((DlqFilter{.app = "-"}.matches(kMalformed)));
}

TEST(DlqFilter, KindUsesTheRecordedKind) {
  EXPECT_TRUE((DlqFilter{.kind = DlqKind::kHandler}.matches(kShop)));
  EXPECT_FALSE((DlqFilter{.kind = DlqKind::kHandler}.matches(kMalformed)));
  EXPECT_TRUE((DlqFilter{.kind = DlqKind::kMalformed}.matches(kMalformed)));
}

TEST(DlqFilter, ReasonAndTextAreCaseInsensitiveSubstrings) {
  EXPECT_TRUE((DlqFilter{.reason = "EXIT"}.matches(kShop)));
  EXPECT_FALSE((DlqFilter{.reason = "timeout"}.matches(kShop)));
  EXPECT_TRUE((DlqFilter{.text = "a-17"}.matches(kShop)));
  EXPECT_TRUE((DlqFilter{.text = "\"order\":\"A-17\""}.matches(kShop)));
  EXPECT_FALSE((DlqFilter{.text = "a-18"}.matches(kShop)));
  EXPECT_TRUE((DlqFilter{.text = "Ünïcode"}.matches(kShop)));  // bytes compare as they are
  EXPECT_TRUE((DlqFilter{.text = "<SCRIPT"}.matches(kMalformed)));
  // The text searches the event only, not the reason.
  EXPECT_FALSE((DlqFilter{.text = "exit 3"}.matches(kShop)));
}

TEST(DlqFilter, TheTimeRangeIsInclusiveOverTheIdsMilliseconds) {
  EXPECT_TRUE((DlqFilter{.since_ms = 1000}.matches(kShop)));
  EXPECT_FALSE((DlqFilter{.since_ms = 1001}.matches(kShop)));
  EXPECT_TRUE((DlqFilter{.until_ms = 2000}.matches(kMalformed)));
  EXPECT_FALSE((DlqFilter{.until_ms = 1999}.matches(kMalformed)));
  EXPECT_TRUE((DlqFilter{.since_ms = 1500, .until_ms = 2500}.matches(kMalformed)));
  EXPECT_FALSE((DlqFilter{.since_ms = 1500, .until_ms = 2500}.matches(kShop)));
}

TEST(DlqFilter, EveryConditionMustHold) {
  EXPECT_FALSE((DlqFilter{.app = "shop", .text = "oops"}.matches(kShop)));
  EXPECT_TRUE((DlqFilter{.app = "shop", .reason = "3", .text = "order"}.matches(kShop)));
}

TEST(DlqFilter, BoundsFollowTheTimeRange) {
  EXPECT_EQ(DlqFilter{}.newestBound(), "+");
  EXPECT_EQ(DlqFilter{}.oldestBound(), "-");
  const DlqFilter range{.since_ms = 10, .until_ms = 20};
  EXPECT_EQ(range.oldestBound(), "10-0");
  EXPECT_EQ(range.newestBound(), "20-18446744073709551615");
}

TEST(ContainsIgnoringCase, FoldsAsciiOnly) {
  EXPECT_TRUE(containsIgnoringCase("Hello World", "WORLD"));
  EXPECT_TRUE(containsIgnoringCase("anything", ""));
  EXPECT_FALSE(containsIgnoringCase("", "a"));
  EXPECT_FALSE(containsIgnoringCase("ÄB", "äb"));  // non-ASCII is not folded
}

}  // namespace
}  // namespace relay::dlq
