#include "runtime/sandbox/sandbox_identities.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace relay::runtime {
namespace {

TEST(SandboxIdentities, EachAppHasOneIdOfItsOwnInTheRangePastTheProbes) {
  SandboxIdentities ids;
  const SandboxIdRange range;
  std::set<uid_t> seen;
  for (int i = 0; i < 500; ++i) {
    const std::string app = "app-" + std::to_string(i);
    const uid_t id = ids.of(app);
    EXPECT_GT(id, range.first) << app;
    EXPECT_LT(id, range.first + range.count) << app;
    EXPECT_EQ(ids.of(app), id) << "stable within a worker";
    seen.insert(id);
  }
  EXPECT_EQ(seen.size(), 500u) << "no two apps share an id";
  EXPECT_EQ(ids.probe(), range.first);
}

TEST(SandboxIdentities, TheSameNameGetsTheSameIdOnEveryReplica) {
  SandboxIdentities one, other;
  (void)other.of("something-else-first");
  EXPECT_EQ(one.of("orders"), other.of("orders"));
}

TEST(SandboxIdentities, ACollisionTakesTheNextFreeId) {
  // A range of three: the probe's id and two for apps, whatever their hashes.
  SandboxIdentities ids(SandboxIdRange{5000, 3});
  const uid_t a = ids.of("a");
  const uid_t b = ids.of("b");
  EXPECT_NE(a, b);
  EXPECT_TRUE(a == 5001 || a == 5002);
  EXPECT_TRUE(b == 5001 || b == 5002);
}

}  // namespace
}  // namespace relay::runtime
