// The claim renewer (docs/pipeline.md "Claims", "Outages"): what it reports, how long it repeats
// an owed call, and its heartbeat, over the in-memory store.
#include "invocation/claim_renewer.h"

#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <sstream>

#include "fakes/fake_clock.h"
#include "fakes/forwarding_store.h"
#include "fakes/in_memory_lifecycle_store.h"

namespace relay::invocation {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;

/// The in-memory store with a hook into renew() and a count of heartbeats.
class HookedStore final : public relay::testing::ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  Status heartbeat(const ClaimTimes& times) override {
    ++heartbeats;
    return ForwardingStore::heartbeat(times);
  }
  Result<RenewVerdict> renew(std::string_view id, std::string_view field, std::string_view token,
                             std::chrono::milliseconds extend, const FlowControl* flow) override {
    if (on_renew) on_renew();
    return ForwardingStore::renew(id, field, token, extend, flow);
  }

  std::function<void()> on_renew;
  int heartbeats = 0;
};

class ClaimRenewerTest : public ::testing::Test {
 protected:
  relay::testing::FakeClock clock_;
  relay::testing::InMemoryLifecycleStore inner_{clock_};
  HookedStore store_{inner_};
  observability::Metrics metrics_;
  std::ostringstream log_;
  observability::Logger logger_{log_, clock_, observability::LogLevel::kDebug};
  ClaimRenewer renewer_{RenewerSettings{}, store_, metrics_, logger_, clock_};
};

// Issue 28, smaller items: a claim whose handler finished while the renewer was renewing it is
// no longer held by its token; that is no error.
TEST_F(ClaimRenewerTest, AClaimUntrackedWhileItWasBeingRenewedIsNotReportedLost) {
  std::optional<ClaimRenewer::Tracked> tracked;
  tracked.emplace(renewer_.track({"1-0", "shop/h", "t1", clock_.monotonicNow() + hours(1), {}}));
  store_.on_renew = [&] { tracked.reset(); };  // the handler ends right now
  renewer_.renewAll();
  EXPECT_EQ(log_.str().find("was lost"), std::string::npos) << log_.str();
}

TEST_F(ClaimRenewerTest, AStillTrackedClaimThatIsNoLongerHeldIsReportedLost) {
  auto tracked = renewer_.track({"1-0", "shop/h", "t1", clock_.monotonicNow() + hours(1), {}});
  renewer_.renewAll();
  EXPECT_NE(log_.str().find("claim of a running handler was lost"), std::string::npos);
}

// docs/pipeline.md "Outages": an owed call is repeated until the store answers, whatever the
// time: never given up when its claim would have expired.
TEST_F(ClaimRenewerTest, AnOwedCallIsRepeatedUntilTheStoreAnswersHoweverLong) {
  int calls = 0;
  bool redis_back = false;
  renewer_.retryLater("complete 1-0 shop/h", [&](LifecycleStore&) {
    ++calls;
    return redis_back;
  });
  for (int round = 0; round < 100; ++round) {  // 100 rounds, 10 s apart: over 16 minutes
    clock_.advance(milliseconds(10'000));
    renewer_.renewAll();
  }
  EXPECT_EQ(renewer_.owed(), 1u);
  EXPECT_EQ(calls, 100);
  redis_back = true;
  renewer_.renewAll();
  EXPECT_EQ(renewer_.owed(), 0u);
  EXPECT_EQ(log_.str().find("given up"), std::string::npos);
}

// The claim of an owed outcome stays renewed until the outcome is recorded.
TEST_F(ClaimRenewerTest, TheClaimOfAnOwedOutcomeIsRenewedUntilItIsRecorded) {
  int renewals = 0;
  store_.on_renew = [&] { ++renewals; };
  bool recorded = false;
  renewer_.retryLater(
      "complete 1-0 shop/h", [&](LifecycleStore&) { return recorded; },
      renewer_.track({"1-0", "shop/h", "t1", clock_.monotonicNow() + milliseconds(1), {}}));
  for (int round = 0; round < 5; ++round) {
    clock_.advance(milliseconds(10'000));  // far past the handler's timeout
    renewer_.renewAll();
  }
  EXPECT_EQ(renewals, 5);
  recorded = true;
  renewer_.renewAll();
  EXPECT_EQ(renewer_.tracked(), 0u);  // done: no longer renewed
}

TEST_F(ClaimRenewerTest, EveryRoundTellsTheStoreAWorkerReachesIt) {
  renewer_.renewAll();
  renewer_.renewAll();
  EXPECT_EQ(store_.heartbeats, 2);
}

}  // namespace
}  // namespace relay::invocation
