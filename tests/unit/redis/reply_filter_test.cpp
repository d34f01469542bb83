#include "redis/reply_filter.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace relay::redis {
namespace {

std::string bulk(const std::string& text) {
  return "$" + std::to_string(text.size()) + "\r\n" + text + "\r\n";
}

// Feeds `input` in pieces of `step` bytes (0: whole) and returns what came out.
std::string filtered(const std::vector<std::optional<ReplyLimits>>& replies,
                     const std::string& input, std::size_t step = 0) {
  ReplyFilter filter;
  for (const auto& limits : replies) filter.expect(limits);
  std::string out;
  if (step == 0) {
    filter.feed(input, out);
  } else {
    for (std::size_t at = 0; at < input.size(); at += step) {
      filter.feed(std::string_view(input).substr(at, step), out);
    }
  }
  EXPECT_EQ(filter.expected(), 0u) << "every reply ended";
  return out;
}

ReplyLimits small() {
  ReplyLimits limits;
  limits.max_bulk = 400;
  limits.max_array_bytes = 500;
  limits.max_elements = 6;
  limits.kept = 8;
  return limits;
}

// An XREADGROUP reply: [[stream, [[id, [field, value, ...]]]]].
std::string readReply(const std::vector<std::string>& fields) {
  std::string entry = "*" + std::to_string(fields.size()) + "\r\n";
  for (const std::string& field : fields) entry += bulk(field);
  return "*1\r\n*2\r\n" + bulk("events") + "*1\r\n*2\r\n" + bulk("1-0") + entry;
}

TEST(ReplyFilter, RepliesWithoutLimitsPassUnchangedHoweverTheyAreSplit) {
  const std::string replies = "+OK\r\n-ERR no\r\n:42\r\n$-1\r\n*-1\r\n*0\r\n" +
                              readReply({"event", std::string(5000, 'x')}) + bulk("") +
                              "*2\r\n*1\r\n:1\r\n$3\r\nabc\r\n";
  for (const std::size_t step : {0, 1, 2, 3, 7, 64}) {
    EXPECT_EQ(filtered({std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                        std::nullopt, std::nullopt, std::nullopt, std::nullopt},
                       replies, step),
              replies)
        << step;
  }
}

// Found by reply_filter_fuzz: the filter re-emits the headers it parses, so a header a server
// would not write (no \r, a leading zero, a plus sign) must be handed on as it came.
TEST(ReplyFilter, AHeaderNotWrittenAsAServerWritesItPassesAsItCame) {
  using namespace std::string_literals;
  const std::vector<std::string> inputs = {"*1\r\n$5\n\0v\rent\r\n"s, "$05\r\nhello\r\n"s,
                                           "*01\r\n:1\r\n"s, "*+1\r\n:1\r\n"s};
  for (const std::string& input : inputs) {
    for (const std::size_t step : {0, 1, 3}) {
      ReplyFilter filter;
      filter.expect(std::nullopt);
      std::string out;
      for (std::size_t at = 0; at < input.size(); at += step == 0 ? input.size() : step) {
        filter.feed(std::string_view(input).substr(at, step == 0 ? input.size() : step), out);
      }
      EXPECT_EQ(out, input) << step;
      EXPECT_TRUE(filter.confused());
    }
  }
}

TEST(ReplyFilter, ABulkOverTheLimitArrivesAsItsFirstBytesAndItsTrueLength) {
  const std::string huge(100'000, 'h');
  const std::string expected =
      readReply({"event"}).substr(0, readReply({"event"}).size() - 0);  // built below
  for (const std::size_t step : {0, 1, 5, 4096}) {
    const std::string out = filtered({small()}, readReply({"event", huge, "other", "v"}), step);
    EXPECT_EQ(out,
              "*1\r\n*2\r\n$6\r\nevents\r\n*1\r\n*2\r\n$3\r\n1-0\r\n*4\r\n$5\r\nevent\r\n"
              "*2\r\n$8\r\nhhhhhhhh\r\n:100000\r\n$5\r\nother\r\n$1\r\nv\r\n")
        << step;
  }
}

TEST(ReplyFilter, AnArraySpendsItsByteBudgetThenItsBulksArriveCut) {
  // 500 bytes for the array's direct bulks: 300 pass, the next keeps 8 (kept), then 8 more...
  const ReplyLimits limits = small();
  const std::string a(300, 'a'), b(150, 'b'), c(100, 'c');
  const std::string out = filtered({limits}, "*3\r\n" + bulk(a) + bulk(b) + bulk(c));
  // a: 300 (200 left); b: 150 passes (50 left); c: 100 > 50: cut to min(100, 8, 50) = 8.
  EXPECT_EQ(out, "*3\r\n" + bulk(a) + bulk(b) + "*2\r\n$8\r\ncccccccc\r\n:100\r\n");
  ReplyLimits none_left = limits;
  none_left.max_array_bytes = 300;
  EXPECT_EQ(filtered({none_left}, "*2\r\n" + bulk(a) + bulk("zz")),
            "*2\r\n" + bulk(a) + "*2\r\n$0\r\n\r\n:2\r\n");
}

TEST(ReplyFilter, AnArrayOfTooManyElementsKeepsTheFirstThenItsTrueCount) {
  std::string many = "*9\r\n";
  for (int i = 0; i < 9; ++i) many += (i == 4 ? "*2\r\n" + bulk("n1") + bulk("n2") : bulk("e"));
  EXPECT_EQ(filtered({small()}, many, 3), "*7\r\n" + bulk("e") + bulk("e") + bulk("e") + bulk("e") +
                                              "*2\r\n" + bulk("n1") + bulk("n2") + bulk("e") +
                                              ":9\r\n");
}

TEST(ReplyFilter, EachReplyHasItsOwnLimitsInOrder) {
  const std::string huge(1000, 'q');
  const std::string two = bulk(huge) + bulk(huge) + bulk(huge);
  const std::string out = filtered({std::nullopt, small(), std::nullopt}, two, 13);
  EXPECT_EQ(out, bulk(huge) + "*2\r\n$8\r\nqqqqqqqq\r\n:1000\r\n" + bulk(huge));
}

TEST(ReplyFilter, ErrorsNilsAndIntegersInsideALimitedReplyPass) {
  const std::string reply = "*5\r\n-ERR x\r\n$-1\r\n*-1\r\n:7\r\n*0\r\n";
  EXPECT_EQ(filtered({small()}, reply, 1), reply);
}

TEST(ReplyFilter, BytesThatAreNotRespPassUnchanged) {
  ReplyFilter filter;
  filter.expect(small());
  std::string out;
  filter.feed("!oops\r\n$3\r\nabc\r\n", out);
  EXPECT_TRUE(filter.confused());
  EXPECT_EQ(out, "!oops\r\n$3\r\nabc\r\n");
  ReplyFilter long_header;
  long_header.expect(small());
  std::string rest;
  long_header.feed("$" + std::string(40, '9') + "\r\n", rest);
  EXPECT_TRUE(long_header.confused());
  EXPECT_EQ(rest, "$" + std::string(40, '9') + "\r\n");
}

TEST(ReplyFilter, ACutBulkIsNeverHeldWhole) {
  // 64 MiB streamed through in 16 KiB reads: what comes out stays tiny.
  ReplyFilter filter;
  filter.expect(small());
  std::string out;
  filter.feed("$67108864\r\n", out);
  const std::string chunk(16384, 'z');
  std::size_t largest = 0;
  for (std::size_t sent = 0; sent < (64u << 20); sent += chunk.size()) {
    out.clear();
    filter.feed(chunk, out);
    largest = std::max(largest, out.size());
  }
  out.clear();
  filter.feed("\r\n", out);
  EXPECT_LE(largest, 32u);
  EXPECT_EQ(out, ":67108864\r\n");
  EXPECT_EQ(filter.expected(), 0u);
}

}  // namespace
}  // namespace relay::redis
