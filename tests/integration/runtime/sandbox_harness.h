#pragma once

// The sandbox runtime as the sandbox suites run it. Built with RELAY_TEST_BACKEND_PREWARMED,
// every invocation is handed to a prewarmed sandbox prepared for it just before (and the test
// fails if it started cold), so the same suites prove that a prewarmed sandbox isolates exactly
// as a cold start does (docs/runtimes.md "Prewarmed sandboxes"). Built with RELAY_TEST_IMAGE_ROOT
// as well, every app names a docker test image (scripts/lib/dockerd.sh), so the sandbox runs on
// that image's root instead of the host's /usr (docs/runtimes.md "Image roots").
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <memory>
#include <string>

#include "fakes/temp_dir.h"
#include "integration/docker/docker_test_env.h"
#include "runtime/sandbox/sandbox_runtime.h"

namespace relay::runtime::testing {

/// The prewarmed build: whether it is this one.
inline constexpr bool kPrewarmedBuild =
#if defined(RELAY_TEST_BACKEND_PREWARMED)
    true;
#else
    false;
#endif

/// The native-launcher build (RELAY_TEST_NATIVE_LAUNCHER): the same suites with relay-launcher
/// building the sandboxes (docs/runtimes.md "Native launcher"); every other build forces bwrap,
/// so both builders are proven by the same tests.
inline constexpr bool kNativeBuild =
#if defined(RELAY_TEST_NATIVE_LAUNCHER)
    true;
#else
    false;
#endif

/// The image-root build: whether it is this one.
inline constexpr bool kImageRootBuild =
#if defined(RELAY_TEST_IMAGE_ROOT)
    true;
#else
    false;
#endif

/// The image cache of the tests: one directory under $TMPDIR (or /tmp: the sandbox user must
/// reach it) per build tree, shared by every test process (ctest runs each test in a process of
/// its own) as Relay processes share theirs, so each test image is unpacked once per build rather
/// than once per test (1-2 s each here); a fresh directory when the build names none.
inline const std::filesystem::path& testImageCache() {
#if defined(RELAY_TEST_IMAGE_CACHE_KEY)
  static const std::filesystem::path dir = [] {
    const char* base = std::getenv("TMPDIR");
    return std::filesystem::path(base != nullptr && *base != '\0' ? base : "/tmp") /
           ("relay-test-image-cache-" +
            std::to_string(std::hash<std::string>{}(RELAY_TEST_IMAGE_CACHE_KEY)));
  }();
  return dir;
#else
  static const relay::testing::TempDir dir;
  ::chmod(dir.path().c_str(), 0755);
  return dir.path();
#endif
}

/// The docker test image with `language`'s interpreter (busybox and its shell in each).
inline std::string testImage(Language language) {
  const docker::DefaultImages images = dockerTestSettings().default_images;
  return language == Language::kNode ? images.node : images.python3;
}

/// The default settings with the built relay-launcher, which every sandbox runs first (the test
/// executables are not beside it), and the tests' image cache.
inline SandboxSettings sandboxTestSettings() {
  SandboxSettings settings;
  settings.image_cache.dir = testImageCache();
  settings.image_cache.max_bytes = 1ULL << 30;  // the test images take about 150 MiB
  settings.docker_host = dockerTestSettings().docker_host;
  settings.sandbox_launcher = kNativeBuild ? SandboxLauncher::kNative : SandboxLauncher::kBwrap;
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
  EXPECT_EQ(sandbox->nativeLauncher(), kNativeBuild) << sandbox->launcherChoice();
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
inline Result<Outcome> runOnce(SandboxRuntime& sandbox, const InvocationSpec& given,
                               OutputSink& output) {
  InvocationSpec spec = given;
  if (kImageRootBuild && spec.image.empty()) spec.image = testImage(spec.language);
  if (!kPrewarmedBuild || !sandbox.availability(spec).available) return sandbox.run(spec, output);
  prepareWarm(sandbox, spec);
  const std::uint64_t before = sandbox.prewarmedRuns();
  auto outcome = sandbox.run(spec, output);
  EXPECT_EQ(sandbox.prewarmedRuns(), before + 1) << "the run started cold";
  return outcome;
}

}  // namespace relay::runtime::testing
