// `--rate` of a replay's copies (docs/replay.md "Windows"): at most N copies in any second at
// N/s, whatever the pages hold and however late they come.
#include "history/replay_pace.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <random>
#include <vector>

namespace relay::history {
namespace {

using std::chrono::milliseconds;

const MonoTime kStart{std::chrono::hours(1)};

TEST(ReplayPace, WithoutARateNothingWaits) {
  ReplayPace pace(0);
  EXPECT_EQ(pace.window(), 0u);
  EXPECT_EQ(pace.pageSize(500), 500u);
  pace.published(500, kStart);
  EXPECT_FALSE(pace.earliest(500));
}

// A first page of a whole window goes at once; the next waits a whole window from the reply
// that put the first in: at 10/s the 15th copy follows the 5th by a second, at 0.5/s each copy
// follows the one before by two.
TEST(ReplayPace, TheFirstWindowGoesAtOnceAndTheNextWaitsAWholeWindowFromItsReply) {
  struct Case {
    double rate;
    std::size_t window, next;
    milliseconds wait;
  };
  for (const Case& c :
       {Case{10, 10, 5, milliseconds(1'000)}, Case{0.5, 1, 1, milliseconds(2'000)}}) {
    ReplayPace pace(c.rate);
    EXPECT_EQ(pace.window(), c.window) << c.rate;
    EXPECT_EQ(pace.pageSize(500), c.window) << c.rate;
    EXPECT_FALSE(pace.earliest(c.window)) << c.rate;
    pace.published(c.window, kStart);
    EXPECT_EQ(pace.earliest(c.next), kStart + c.wait) << c.rate;
  }
}

TEST(ReplayPace, APartPageThenAFullOneNeverPutsMoreThanTheRateInASecond) {
  ReplayPace pace(10);
  pace.published(5, kStart);
  // Counting copies from the start would let these 10 follow half a second later: 15 copies
  // within a second. The last of them waits for the 5th's reply.
  EXPECT_EQ(pace.earliest(10), kStart + milliseconds(1'000));
  // 5 more copies, though, follow the 5 at once: 10 in the second.
  EXPECT_FALSE(pace.earliest(5));
}

TEST(ReplayPace, ADriveThatFellBehindDoesNotCatchUpInABurst) {
  ReplayPace pace(10);
  pace.published(10, kStart);
  pace.published(10, kStart + milliseconds(5'000));  // a stall: 4 s late
  EXPECT_EQ(pace.earliest(10), kStart + milliseconds(6'000));
  EXPECT_EQ(pace.earliest(1), kStart + milliseconds(6'000));
}

// Pages of any size up to the window, each published as soon as it may, taking some time of its
// own: for every copy, the one `window` places later was added at least a second after it was
// in the stream, so no second holds more than the rate's copies.
TEST(ReplayPace, AnySequenceOfPagesKeepsEverySecondWithinTheRate) {
  std::mt19937 random(20261206);
  for (const double rate : {1.0, 3.0, 10.0, 50.0}) {
    ReplayPace pace(rate);
    const std::size_t window = pace.window();
    ASSERT_EQ(pace.pageSize(500), window);
    std::vector<MonoTime> added, in_stream;  // per copy: its XADD (earliest), its page's reply
    MonoTime now = kStart;
    for (int page = 0; page < 300; ++page) {
      const std::size_t copies = std::uniform_int_distribution<std::size_t>(0, window)(random);
      if (const auto at = pace.earliest(copies); at && *at > now) now = *at;
      const MonoTime reply = now + milliseconds(std::uniform_int_distribution<int>(0, 30)(random));
      for (std::size_t i = 0; i < copies; ++i) {
        added.push_back(now);
        in_stream.push_back(reply);
      }
      pace.published(copies, reply);
      now = reply + milliseconds(std::uniform_int_distribution<int>(0, 200)(random));
    }
    ASSERT_GT(added.size(), window * 10);
    const auto span = std::chrono::duration_cast<MonoTime::duration>(
        std::chrono::duration<double>(static_cast<double>(window) / rate));
    for (std::size_t j = 0; j + window < added.size(); ++j) {
      ASSERT_GE(added[j + window] - in_stream[j], span) << "rate " << rate << ", copy " << j;
    }
  }
}

}  // namespace
}  // namespace relay::history
