#include "invocation/output_tail.h"

#include <gtest/gtest.h>

#include <sstream>

#include "fakes/fake_clock.h"

namespace relay::invocation {
namespace {

class OutputTailTest : public ::testing::Test {
 protected:
  relay::testing::FakeClock clock_;
  std::ostringstream log_;
  observability::Logger logger_{log_, clock_, observability::LogLevel::kError};
};

TEST_F(OutputTailTest, ForwardsEveryLineToTheLogWhateverTheLevel) {
  OutputTail tail(logger_);
  tail.line("[shop/h] hello");
  EXPECT_NE(log_.str().find("[shop/h] hello"), std::string::npos);
  EXPECT_EQ(tail.text(), "[shop/h] hello");
}

TEST_F(OutputTailTest, KeepsOnlyTheLastBytesOfWholeLines) {
  OutputTail tail(logger_, 20);
  tail.line("[a] first line");
  tail.line("[a] second");
  tail.line("[a] third");
  EXPECT_EQ(tail.text(), "[a] second\n[a] third");
  EXPECT_LE(tail.text().size(), 20u);
}

TEST_F(OutputTailTest, ALongLastLineKeepsItsEnd) {
  OutputTail tail(logger_, 8);
  tail.line("[a] 0123456789");
  EXPECT_EQ(tail.text(), "23456789");
}

TEST_F(OutputTailTest, DefaultLimitIsFourKibibytes) {
  OutputTail tail(logger_);
  for (int i = 0; i < 1000; ++i) tail.line("[a] line " + std::to_string(i));
  EXPECT_LE(tail.text().size(), 4096u);
  EXPECT_GT(tail.text().size(), 4000u);
  EXPECT_NE(tail.text().find("[a] line 999"), std::string::npos);
}

}  // namespace
}  // namespace relay::invocation
