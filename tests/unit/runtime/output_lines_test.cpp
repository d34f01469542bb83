#include "runtime/output_lines.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace relay::runtime {
namespace {

struct Lines : OutputSink {
  std::vector<std::string> lines;
  void line(std::string_view text) override { lines.emplace_back(text); }
};

TEST(LineSplitter, PrefixesEveryCompleteLineVerbatim) {
  Lines sink;
  LineSplitter splitter("[app/h] ", sink);
  splitter.feed("one\ntw");
  splitter.feed("o\r\n\nthree");
  EXPECT_EQ(sink.lines, (std::vector<std::string>{"[app/h] one", "[app/h] two\r", "[app/h] "}));
  splitter.finish();
  EXPECT_EQ(sink.lines.back(), "[app/h] three");
}

TEST(LineSplitter, FinishWithoutPartialLineEmitsNothing) {
  Lines sink;
  LineSplitter splitter("p ", sink);
  splitter.feed("done\n");
  splitter.finish();
  EXPECT_EQ(sink.lines.size(), 1u);
}

TEST(LineSplitter, SplitsOverlongLinesSoMemoryStaysBounded) {
  Lines sink;
  LineSplitter splitter("", sink);
  const std::string huge(LineSplitter::kMaxLineBytes * 2 + 10, 'x');
  splitter.feed(huge);
  ASSERT_EQ(sink.lines.size(), 2u);
  EXPECT_EQ(sink.lines[0].size(), LineSplitter::kMaxLineBytes);
  splitter.feed("\n");
  ASSERT_EQ(sink.lines.size(), 3u);
  EXPECT_EQ(sink.lines[2].size(), 10u);
}

TEST(LineSplitter, KeepsNonUtf8BytesUntouched) {
  Lines sink;
  LineSplitter splitter("", sink);
  const std::string bytes = std::string("\xff\xfe caf\xc3\xa9 \0 end", 14);
  splitter.feed(bytes + "\n");
  ASSERT_EQ(sink.lines.size(), 1u);
  EXPECT_EQ(sink.lines[0], bytes);
}

}  // namespace
}  // namespace relay::runtime
