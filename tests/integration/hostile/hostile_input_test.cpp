// Hostile producers: events built to make the rule and the handler read different things, or
// to break a bootstrap, published to the stream the real `relay start` reads.
#include "integration/hostile/hostile_fixture.h"

namespace relay::testing {
namespace {

// Every string of a reply, nested arrays included, joined by newlines.
void flatten(const redis::ReplyView& reply, std::string& out) {
  if (reply.isArray()) {
    const auto elements = reply.elements();
    for (const redis::ReplyView& element : *elements) flatten(element, out);
  } else if (auto text = reply.string(); text.ok()) {
    out.append(*text).append("\n");
  }
}

// The handler of the node app: prints what `n` became, then DONE cold|prewarmed as hostile.py
// does.
constexpr const char* kNodeHandler = R"JS(
import fs from "fs";
export function number_digits(event) {
  console.log("PARSED " + typeof event.n + " " + JSON.stringify(Object.keys(event)));
  const cold = fs.readFileSync("/proc/self/environ", "latin1").includes("RELAY_MESSAGE_ID=");
  console.log("DONE " + (cold ? "cold" : "prewarmed"));
}
)JS";

TEST_F(HostileHandler, ARepeatedKeyIsMalformedAndNeverReachesAHandler) {
  addApp("hostile", {"fds"});
  startRelay();
  auto redis = connect();
  ASSERT_NE(redis, nullptr);
  // The rule matches `attempt: [fds]`; a handler's JSON library would read the last "role".
  for (const std::string event :
       {R"({"attempt":"fds","role":"user","amount":1,"role":"admin","amount":1000000000})",
        R"({"attempt":"fds","role":"user","r\u006fle":"admin"})",
        R"({"attempt":"other","attempt":"fds"})"}) {
    ASSERT_TRUE(redis->command({"XADD", "events", "*", "event", event}).ok());
  }
  std::string dlq;
  ASSERT_TRUE(SpawnedProcess::waitUntil(
      [&] {
        auto entries = redis->command({"XRANGE", "relay:events:dlq", "-", "+"});
        if (!entries.ok() || entries->size() < 3) return false;
        dlq.clear();
        flatten(*entries, dlq);
        return true;
      },
      std::chrono::seconds(30)))
      << log();
  EXPECT_EQ(count(dlq, "malformed: duplicate key \"role\""), 2u) << dlq;
  EXPECT_EQ(count(dlq, "malformed: duplicate key \"attempt\""), 1u) << dlq;
  EXPECT_EQ(count(log(), "[hostile/hostile.fds]"), 0u) << log();
}

TEST_F(HostileHandler, TheBootstrapsParseIntegersOfAnyLengthRelayAccepts) {
  // Python refuses int() of more than 4300 digits by default; Relay accepts them.
  const std::string digits(5000, '7');
  addApp("hostile", {"number_digits"});
  addApp("hostile-node", {"number_digits"}, "", {{"hostile.mjs", kNodeHandler}}, "node");
  startRelay();
  const std::string event = R"({"attempt":"number_digits","n":)" + digits + "}";
  const auto python = attempt("hostile", "number_digits", event);
  // Every run (attempt() makes sure one was prewarmed) parsed it exactly.
  EXPECT_EQ(count(joined(python), "EXACT int 777777777 16610\n"), count(joined(python), "DONE "))
      << joined(python);
  EXPECT_GE(count(joined(python), "EXACT "), 1u) << joined(python);
  const auto node = attempt("hostile-node", "number_digits", event);
  // node reads a number as a double (this one as Infinity): parsed, the member is there.
  EXPECT_EQ(count(joined(node), R"(PARSED number ["attempt","n"])"), count(joined(node), "DONE "))
      << joined(node);
  EXPECT_GE(count(joined(node), "PARSED "), 1u) << joined(node);
}

}  // namespace
}  // namespace relay::testing
