// /healthz reflects failing lifecycle scripts (docs/operations.md "HTTP endpoints"): the
// indicator every store call reports to, and the store wrapper that reports them.
#include "invocation/store_health.h"

#include <gtest/gtest.h>

#include "fakes/fake_clock.h"
#include "fakes/in_memory_lifecycle_store.h"
#include "invocation/health_reporting_store.h"

namespace relay::invocation {
namespace {

TEST(StoreHealth, UnhealthyAfterThreeFailuresInARowHealthyAgainAtTheFirstSuccess) {
  testing::FakeClock clock;
  StoreHealth health(clock);
  EXPECT_FALSE(health.problem());
  health.failed("try_start", Error::unavailable("NOPERM this user has no permissions"));
  health.failed("try_start", Error::unavailable("NOPERM this user has no permissions"));
  EXPECT_FALSE(health.problem()) << "two failures are not yet a failing lifecycle";
  // Each failed start is followed by a release that succeeds: that hides nothing.
  health.succeeded("release");
  clock.advance(std::chrono::seconds(5));
  health.failed("try_start", Error::unavailable("ERR script: WRONGTYPE Operation"));
  const auto problem = health.problem();
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("try_start failed 3 times in a row since"), std::string::npos)
      << *problem;
  EXPECT_NE(problem->find("WRONGTYPE"), std::string::npos) << *problem;
  health.succeeded("try_start");
  EXPECT_FALSE(health.problem());
  // A failure among successes (one message's bad state) never adds up.
  for (int i = 0; i < 10; ++i) {
    health.failed("try_start", Error::unavailable("WRONGTYPE"));
    health.succeeded("try_start");
  }
  EXPECT_FALSE(health.problem());
}

TEST(StoreHealth, ARunWhoseCallsStoppedNoLongerCountsAfterTheWindow) {
  testing::FakeClock clock;
  StoreHealth health(clock, {.threshold = 2, .window = std::chrono::minutes(2)});
  health.failed("renew", Error::unavailable("LOADING"));
  health.failed("renew", Error::unavailable("LOADING"));
  EXPECT_TRUE(health.problem());
  clock.advance(std::chrono::seconds(119));
  EXPECT_TRUE(health.problem());
  clock.advance(std::chrono::seconds(2));
  EXPECT_FALSE(health.problem());
}

TEST(HealthReportingStore, ReportsEveryTransitionOfTheStoreItWraps) {
  testing::FakeClock clock;
  StoreHealth health(clock, {.threshold = 1});
  auto memory = std::make_unique<testing::InMemoryLifecycleStore>(clock);
  testing::InMemoryLifecycleStore& inner = *memory;
  HealthReportingStore store(std::move(memory), health);
  inner.deliver("1-0");
  inner.loseNextReply("acknowledge");
  EXPECT_FALSE(store.acknowledge("1-0").ok());
  const auto problem = health.problem();
  ASSERT_TRUE(problem);
  EXPECT_NE(problem->find("xack failed 1 times"), std::string::npos) << *problem;
  EXPECT_TRUE(store.acknowledge("1-0").ok());  // the repeat: the recorded verdict
  EXPECT_FALSE(health.problem());
  inner.deliver("2-0");
  const auto settled = store.settle({SettleRequest{"2-0", false, std::nullopt}});
  ASSERT_EQ(settled.size(), 1u);
  EXPECT_TRUE(settled[0].ok());
  EXPECT_FALSE(health.problem());
}

}  // namespace
}  // namespace relay::invocation
