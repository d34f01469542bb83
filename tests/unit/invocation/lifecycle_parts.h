#pragma once

#include <sstream>

#include "fakes/fake_catalog.h"
#include "fakes/fake_clock.h"
#include "fakes/fake_runtime.h"
#include "invocation/lifecycle.h"

namespace relay::invocation {

/// What a Lifecycle under test is built from, except its store: fakes, clocks and a logger
/// writing to a string. The store has its own clock (Redis TIME in production).
struct LifecycleParts {
  relay::testing::FakeClock store_clock_;
  relay::testing::FakeClock clock_;
  relay::testing::FakeCatalog catalog_;
  relay::testing::FakeRuntime runtime_;
  ConcurrencyLimiter limiter_{16};
  LifecycleObserver observer_;
  observability::Metrics metrics_;
  std::ostringstream log_;
  observability::Logger logger_{log_, clock_, observability::LogLevel::kDebug};
  SystemRandom random_;
};

}  // namespace relay::invocation
