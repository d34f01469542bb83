#include <signal.h>
#include <unistd.h>

#include <fstream>

#include <gtest/gtest.h>

#include "integration/runtime/runtime_harness.h"
#include "runtime/process/process_runtime.h"

namespace relay::runtime::testing {
namespace {

TEST(ProcessRuntime, KillsBackgroundChildrenWhenTheHandlerExits) {
  SystemClock clock;
  ProcessRuntime runtime(clock);
  TestApp app;
  app.script("bin/spawn.sh", "sleep 300 & echo $! > \"$PWD/child.pid\"; exit 0");
  CollectingSink sink;
  const auto outcome = runtime.run(app.spec(Language::kExec, "bin/spawn.sh"), sink);
  ASSERT_TRUE(outcome.ok()) << outcome.error().message;
  EXPECT_TRUE(outcome->succeeded);
  pid_t child = 0;
  std::ifstream(app.path() / "child.pid") >> child;
  ASSERT_GT(child, 0);
  // SIGKILL is asynchronous: give the kernel a moment, then the child must be gone (or a
  // zombie awaiting its reaper), never still running.
  std::string state = "R";
  for (int i = 0; i < 200 && state != "Z" && state != "gone"; ++i) {
    std::ifstream stat("/proc/" + std::to_string(child) + "/stat");
    std::string pid_field, comm;
    if (!(stat >> pid_field >> comm >> state)) state = "gone";
    if (state != "Z" && state != "gone") ::usleep(10'000);
  }
  EXPECT_TRUE(state == "Z" || state == "gone") << state;
}

TEST(ProcessRuntime, RunsInTheAppDirectory) {
  SystemClock clock;
  ProcessRuntime runtime(clock);
  TestApp app;
  app.script("bin/pwd.sh", "pwd");
  CollectingSink sink;
  const auto outcome = runtime.run(app.spec(Language::kExec, "bin/pwd.sh"), sink);
  ASSERT_TRUE(outcome.ok());
  EXPECT_EQ(sink.text("[testapp/bin/pwd.sh] "), app.path().string());
}

TEST(ProcessRuntime, MissingInterpreterMakesTheAppUnavailable) {
  SystemClock clock;
  ProcessRuntime runtime(clock, /*search_path=*/"/nonexistent");
  TestApp app;
  app.file("h.py", "def fn(e): pass\n");
  const Availability availability = runtime.availability(app.spec(Language::kPython3, "h.fn"));
  EXPECT_FALSE(availability.available);
  EXPECT_NE(availability.reason.find("python3 not found"), std::string::npos)
      << availability.reason;
}

TEST(ProcessRuntime, BadInterpreterLineIsAHandlerFailure) {
  SystemClock clock;
  ProcessRuntime runtime(clock);
  TestApp app;
  app.file("bin/broken", "#!/no/such/interpreter\n");
  ::chmod((app.path() / "bin/broken").c_str(), 0755);
  CollectingSink sink;
  const auto outcome = runtime.run(app.spec(Language::kExec, "bin/broken"), sink);
  ASSERT_TRUE(outcome.ok()) << outcome.error().message;
  EXPECT_FALSE(outcome->succeeded);
  EXPECT_NE(outcome->reason.find("No such file"), std::string::npos) << outcome->reason;
  EXPECT_EQ(sink.startedCount(), 1) << "an Outcome, so a charged attempt: reported as started";
}

}  // namespace
}  // namespace relay::runtime::testing
