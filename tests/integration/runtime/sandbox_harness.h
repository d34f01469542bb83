#pragma once

// The sandbox runtime as the sandbox suites run it. Built with RELAY_TEST_BACKEND_PREWARMED,
// every invocation is handed to a prewarmed sandbox prepared for it just before (and the test
// fails if it started cold), so the same suites prove that a prewarmed sandbox isolates exactly
// as a cold start does (docs/runtimes.md "Prewarmed sandboxes").
#include <gtest/gtest.h>

#include <memory>

#include "runtime/sandbox/sandbox_runtime.h"

namespace relay::runtime::testing {

/// The prewarmed build: whether it is this one.
inline constexpr bool kPrewarmedBuild =
#if defined(RELAY_TEST_BACKEND_PREWARMED)
    true;
#else
    false;
#endif

/// The default settings with the built relay-launcher, which every sandbox runs first (the test
/// executables are not beside it).
inline SandboxSettings sandboxTestSettings() {
  SandboxSettings settings;
#if defined(RELAY_TEST_LAUNCHER)
  settings.launcher = RELAY_TEST_LAUNCHER;  // network: true installs its egress filter with it
#endif
  return settings;
}

/// A sandbox runtime with the default settings; in the prewarmed build with no background
/// warmer (prepareWarm() prepares each sandbox).
inline std::unique_ptr<SandboxRuntime> makeSandboxTestRuntime(Clock& clock) {
  SandboxSettings settings = sandboxTestSettings();
#if defined(RELAY_TEST_BACKEND_PREWARMED)
  settings.prewarm_settings.background = false;
#else
  settings.prewarm = false;  // every invocation starts cold
#endif
  auto sandbox = SandboxRuntime::create(clock, settings);
  EXPECT_EQ(sandbox->hostProblem(), "") << "the sandbox must work on the test machine";
  if (kPrewarmedBuild) {
    EXPECT_NE(sandbox->prewarmPool(), nullptr) << "relay-launcher not found";
  }
  return sandbox;
}

/// Makes the pool keep one sandbox of spec's app and shape ready, now: records an arrival
/// (so the shape has a target of one) and runs one maintenance pass.
inline void prepareWarm(SandboxRuntime& sandbox, const InvocationSpec& spec) {
  PrewarmPool* pool = sandbox.prewarmPool();
  ASSERT_NE(pool, nullptr);
  (void)pool->take(spec);
  pool->maintain();
  ASSERT_GE(pool->ready(spec.app), 1u) << "no sandbox could be prepared";
}

/// Runs `spec`: cold in the sandbox build; in the prewarmed build on a sandbox prepared for
/// it, checking that the run took it. What cannot run at all is refused before any sandbox is
/// involved, as on a cold start.
inline Result<Outcome> runOnce(SandboxRuntime& sandbox, const InvocationSpec& spec,
                               OutputSink& output) {
  if (!kPrewarmedBuild || !sandbox.availability(spec).available) return sandbox.run(spec, output);
  prepareWarm(sandbox, spec);
  const std::uint64_t before = sandbox.prewarmedRuns();
  auto outcome = sandbox.run(spec, output);
  EXPECT_EQ(sandbox.prewarmedRuns(), before + 1) << "the run started cold";
  return outcome;
}

}  // namespace relay::runtime::testing
