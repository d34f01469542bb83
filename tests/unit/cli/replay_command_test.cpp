// `relay replay` and `relay dlq replay` argument errors (docs/cli.md "relay replay"): each is
// refused with exit 2, naming the flag, before Redis is touched.
#include <gtest/gtest.h>

#include "cli/replay_options.h"
#include "support/cli_run.h"

namespace relay::cli {
namespace {

using testing::run;
using testing::ScopedEnv;

constexpr std::int64_t kNow = 1'700'000'000'000;

TEST(ReplayWindow, SinceIsTheLastDurationOnRedisClock) {
  auto window = replayWindow({"1h", "", ""}, kNow);
  ASSERT_TRUE(window.ok()) << window.error().message;
  EXPECT_EQ(window->first, "1699996400000-0");
  EXPECT_EQ(window->second, "1700000000000-18446744073709551615");
}

TEST(ReplayWindow, FromAndToTakeIdsOrMilliseconds) {
  auto ids = replayWindow({"", "5-1", "9-2"}, kNow);
  ASSERT_TRUE(ids.ok());
  EXPECT_EQ(ids->first, "5-1");
  EXPECT_EQ(ids->second, "9-2");
  auto ms = replayWindow({"", "5", "9"}, kNow);
  ASSERT_TRUE(ms.ok());
  EXPECT_EQ(ms->first, "5-0");
  EXPECT_EQ(ms->second, "9-18446744073709551615");
}

TEST(ReplayWindow, RefusesWhatIsNoWindowNamingTheFlag) {
  const std::vector<std::pair<ReplayWindowFlags, std::string>> cases = {
      {{"", "", ""}, "--since DURATION, or --from ID with --to ID"},
      {{"1h", "5", ""}, "use one"},
      {{"", "5", ""}, "--from ID with --to ID"},
      {{"soon", "", ""}, "--since \"soon\""},
      {{"-1h", "", ""}, "--since"},
      {{"", "x-1", "9"}, "--from \"x-1\""},
      {{"", "5", "9-"}, "--to \"9-\""},
      {{"", "9", "5"}, "is after --to"},
  };
  for (const auto& [flags, named] : cases) {
    auto window = replayWindow(flags, kNow);
    ASSERT_FALSE(window.ok()) << named;
    EXPECT_NE(window.error().message.find(named), std::string::npos) << window.error().message;
  }
}

TEST(ReplayRate, TakesCopiesPerSecond) {
  EXPECT_EQ(*parseReplayRate(""), 0);
  EXPECT_EQ(*parseReplayRate("50/s"), 50);
  EXPECT_EQ(*parseReplayRate("7"), 7);
  for (const char* bad : {"0/s", "-3/s", "fast", "5/m", "1.5/s", "2000000/s"}) {
    auto rate = parseReplayRate(bad);
    ASSERT_FALSE(rate.ok()) << bad;
    EXPECT_NE(rate.error().message.find("--rate"), std::string::npos);
  }
}

// Refused before any connection: the URI points nowhere.
TEST(ReplayCommand, BadArgumentsAreUsageErrors) {
  ScopedEnv uri("REDIS_URI", "redis://127.0.0.1:1");
  const auto no_app = run({"replay", "--since", "1h"});
  EXPECT_EQ(no_app.exit_code, 2);
  EXPECT_NE(no_app.err.find("--app NAME is required"), std::string::npos) << no_app.err;
  const auto bad_rate = run({"replay", "--app", "a", "--since", "1h", "--rate", "lots"});
  EXPECT_EQ(bad_rate.exit_code, 2);
  EXPECT_NE(bad_rate.err.find("--rate \"lots\""), std::string::npos) << bad_rate.err;
  const auto no_filter = run({"replay", "--app", "a", "--since", "1h", "--filter", "/nonexistent"});
  EXPECT_EQ(no_filter.exit_code, 2);
  EXPECT_NE(no_filter.err.find("--filter /nonexistent"), std::string::npos) << no_filter.err;
  const auto both = run({"dlq", "replay", "1-0", "--app", "a"});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("not both"), std::string::npos) << both.err;
  const auto neither = run({"dlq", "replay"});
  EXPECT_EQ(neither.exit_code, 2);
  EXPECT_NE(neither.err.find("give an entry ID"), std::string::npos) << neither.err;
  const auto no_id = run({"replay", "show"});
  EXPECT_EQ(no_id.exit_code, 2);
}

}  // namespace
}  // namespace relay::cli
