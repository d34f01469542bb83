// StartGate (docs/runtimes.md "Set-up failures"): what a sandbox prints before its first program
// reports `started` is the sandbox's own, held back and the reason of a failure; from `started`
// on it is the handler's, after OutputSink::started().
#include "runtime/sandbox/start_gate.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace relay::runtime {
namespace {

/// Records lines and the start, in order.
struct Recording final : OutputSink {
  void line(std::string_view text) override { events.emplace_back(text); }
  void started() override { events.emplace_back("<started>"); }
  std::vector<std::string> events;
};

constexpr std::string_view kPrefix = "[app/bin/h.sh] ";

TEST(StartGate, HoldsTheSandboxsOutputUntilTheStartThenForwardsEverything) {
  Recording handler;
  StartGate gate(handler, kPrefix);
  gate.line("[app/bin/h.sh] pasta: a warning");
  EXPECT_TRUE(handler.events.empty());
  EXPECT_FALSE(gate.opened());
  gate.status("star");  // a report may arrive in pieces
  EXPECT_FALSE(gate.opened());
  gate.status("ted\n");
  EXPECT_TRUE(gate.opened());
  gate.line("[app/bin/h.sh] handler output");
  EXPECT_EQ(handler.events,
            (std::vector<std::string>{"<started>", "[app/bin/h.sh] pasta: a warning",
                                      "[app/bin/h.sh] handler output"}));
}

TEST(StartGate, WithoutAStartTheHeldLinesAreTheFailure) {
  Recording handler;
  StartGate gate(handler, kPrefix);
  gate.line("[app/bin/h.sh] bwrap: Can't find source path /x: No such file or directory");
  gate.line("[app/bin/h.sh] ");
  gate.line("[app/bin/h.sh] second line");
  EXPECT_FALSE(gate.opened());
  EXPECT_EQ(gate.failure(),
            "bwrap: Can't find source path /x: No such file or directory; second line");
  EXPECT_TRUE(handler.events.empty());
}

TEST(StartGate, ARefusalIsTheFailureWhateverWasPrinted) {
  Recording handler;
  StartGate gate(handler, kPrefix);
  gate.line("[app/bin/h.sh] relay-launcher: malformed hand-over: payload too large");
  gate.status("refused: malformed hand-over: payload too large\n");
  EXPECT_FALSE(gate.opened());
  EXPECT_EQ(gate.failure(), "malformed hand-over: payload too large");
}

TEST(StartGate, StartsOnceAndIgnoresAnythingElseOnTheStatusDescriptor) {
  Recording handler;
  StartGate gate(handler, kPrefix);
  gate.status("nonsense\nstarted\nstarted\nrefused: late\n");
  EXPECT_TRUE(gate.opened());
  EXPECT_EQ(handler.events, std::vector<std::string>{"<started>"});
  EXPECT_EQ(gate.failure(), "");
}

TEST(StartGate, HoldsABoundedAmount) {
  Recording handler;
  StartGate gate(handler, kPrefix);
  for (int i = 0; i < 10'000; ++i) gate.line("[app/bin/h.sh] " + std::string(100, 'x'));
  EXPECT_LT(gate.failure().size(), 20'000u);
}

}  // namespace
}  // namespace relay::runtime
