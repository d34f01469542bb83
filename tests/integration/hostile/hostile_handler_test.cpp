// The hostile-handler suite (issue 12, docs/runtimes.md "What the sandbox guarantees"): each
// escape a hostile app author tried against `relay start` on the sandbox runtime, asserted to
// fail. Relay talks to a redis-server with requirepass, so a leaked connection would be an
// authenticated one.
#include "integration/hostile/hostile_fixture.h"

namespace relay::testing {
namespace {

TEST_F(HostileHandler, SeesOnlyDescriptorsZeroToTwoAndNoRedisConnection) {
  addApp("hostile", {"fds"});
  startRelay();
  const auto lines = attempt("hostile", "fds", R"({"attempt":"fds"})");
  ASSERT_FALSE(lines.empty()) << log();
  EXPECT_EQ(lines.front(), "FDS 0,1,2") << joined(lines);
  expectAllBlocked(lines, 0);
}

TEST_F(HostileHandler, CannotReachRedisOverTheNetworkWithoutNetwork) {
  addApp("hostile", {"redis_tcp"});
  startRelay();
  const auto lines = attempt(
      "hostile", "redis_tcp",
      R"({"attempt":"redis_tcp","host":"127.0.0.1","port":)" + std::to_string(port()) + "}");
  expectAllBlocked(lines, 1);
}

}  // namespace
}  // namespace relay::testing
