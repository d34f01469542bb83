// docs/runtimes.md "Set-up failures": a sandbox that could not be set up never started the
// handler, so the sandbox runtime returns an Error (not charged) with the reason, and never
// calls OutputSink::started(); only the handler's own exit is an Outcome. Each failure is a real
// one: bwrap whose bind cannot be mounted, bwrap in a user namespace whose
// user.max_user_namespaces is 0, pasta that cannot start, a hand-over the launcher refuses.
// bwrap and pasta are wrapped by scripts found first on the runtime's search path that fail
// only once the test asks (after the runtime's start-up probes passed).
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <filesystem>

#include "integration/runtime/runtime_harness.h"
#include "integration/runtime/sandbox_harness.h"

namespace relay::runtime::testing {
namespace {

class SandboxSetup : public ::testing::Test {
 protected:
  void SetUp() override {
    ::chmod(tools_.path().c_str(), 0755);
    // Each wrapper runs the real tool, or fails the way the test asked, by a file's presence.
    wrap("bwrap",
         "if [ -e " + flag("unmountable") +
             " ]; then exec /usr/bin/bwrap --ro-bind /nonexistent-relay-test /mnt \"$@\"; fi\n"
             "if [ -e " +
             flag("no-userns") +
             " ]; then exec unshare --user --map-root-user /bin/sh -c "
             "'echo 0 > /proc/sys/user/max_user_namespaces && exec /usr/bin/bwrap \"$@\"' "
             "sh \"$@\"; fi\n"
             "exec /usr/bin/bwrap \"$@\"");
    wrap("pasta", "if [ -e " + flag("pasta") +
                      " ]; then exec /usr/bin/pasta --no-such-option \"$@\"; fi\n"
                      "exec /usr/bin/pasta \"$@\"");
    SandboxSettings settings = sandboxTestSettings();
    settings.search_path = tools_.path().string() + ":/usr/local/bin:/usr/bin:/bin";
    settings.prewarm = false;  // every run starts its sandbox: the failures are at start
    sandbox_ = SandboxRuntime::create(clock_, settings);
    ASSERT_EQ(sandbox_->hostProblem(), "");
    ASSERT_EQ(sandbox_->networkProblem(), "");
    app_.script("bin/ok.sh", "echo handler ran");
  }
  std::string flag(const std::string& name) const {
    return (tools_.path() / ("fail-" + name)).string();
  }
  void fail(const std::string& name) { tools_.write("fail-" + name, ""); }
  void wrap(const std::string& tool, const std::string& body) {
    tools_.write(tool, "#!/bin/sh\n" + body + "\n", 0755);
  }
  /// In the native-launcher build bwrap no longer builds these sandboxes, so its injected
  /// failures cannot happen; the native launcher's own refusals travel the same status path
  /// (AHandOverTheLauncherRefusesIsNotAHandlerFailure runs in both builds).
  bool bwrapBuildsIt() const { return !kNativeBuild; }
  /// Runs bin/ok.sh, expecting an Error that names `why`, nothing started, nothing of the
  /// handler's.
  void expectNotStarted(const InvocationSpec& spec, const std::string& why) {
    CollectingSink sink;
    const auto outcome = sandbox_->run(spec, sink);
    ASSERT_FALSE(outcome.ok()) << "charged as an attempt: " << outcome->reason;
    EXPECT_EQ(outcome.error().kind, ErrorKind::kUnavailable);
    EXPECT_NE(outcome.error().message.find("sandbox set-up failed"), std::string::npos)
        << outcome.error().message;
    EXPECT_NE(outcome.error().message.find(why), std::string::npos) << outcome.error().message;
    EXPECT_EQ(sink.startedCount(), 0);
    EXPECT_FALSE(sink.contains("handler ran"));
  }

  SystemClock clock_;
  relay::testing::TempDir tools_;
  TestApp app_;
  std::unique_ptr<SandboxRuntime> sandbox_;
};

TEST_F(SandboxSetup, ABindBwrapCannotMountIsNotAHandlerFailure) {
  if (!bwrapBuildsIt())
    GTEST_SKIP() << "bwrap's own failure: the native launcher builds this sandbox";
  fail("unmountable");
  expectNotStarted(app_.spec(Language::kExec, "bin/ok.sh"),
                   "Can't find source path /nonexistent-relay-test");
}

TEST_F(SandboxSetup, ExhaustedUserNamespacesAreNotAHandlerFailure) {
  if (!bwrapBuildsIt())
    GTEST_SKIP() << "bwrap's own failure: the native launcher builds this sandbox";
  fail("no-userns");
  expectNotStarted(app_.spec(Language::kExec, "bin/ok.sh"), "max_*_namespaces exceeded");
}

TEST_F(SandboxSetup, PastaThatCannotStartIsNotAHandlerFailure) {
  fail("pasta");
  InvocationSpec spec = app_.spec(Language::kExec, "bin/ok.sh");
  spec.network = true;
  expectNotStarted(spec, "no-such-option");
}

TEST_F(SandboxSetup, AHandOverTheLauncherRefusesIsNotAHandlerFailure) {
  // Over the 4 MiB a hand-over may carry: relay-launcher refuses it before running anything.
  InvocationSpec spec = app_.spec(Language::kExec, "bin/ok.sh");
  spec.app_env = {{"BIG", std::string(5 << 20, 'x')}};
  expectNotStarted(spec, "payload too large");
}

TEST_F(SandboxSetup, AFailingPythonHandOverIsNotAHandlerFailureEither) {
  if (!bwrapBuildsIt())
    GTEST_SKIP() << "bwrap's own failure: the native launcher builds this sandbox";
  fail("unmountable");
  app_.file("jobs.py", "def run(event):\n    print('handler ran')\n");
  expectNotStarted(app_.spec(Language::kPython3, "jobs.run"), "Can't find source path");
}

TEST_F(SandboxSetup, TheSandboxWorkingAgainRunsTheHandler) {
  if (!bwrapBuildsIt())
    GTEST_SKIP() << "bwrap's own failure: the native launcher builds this sandbox";
  fail("unmountable");
  expectNotStarted(app_.spec(Language::kExec, "bin/ok.sh"), "Can't find source path");
  std::filesystem::remove(flag("unmountable"));
  CollectingSink sink;
  const auto outcome = sandbox_->run(app_.spec(Language::kExec, "bin/ok.sh"), sink);
  ASSERT_TRUE(outcome.ok()) << outcome.error().message;
  EXPECT_TRUE(outcome->succeeded) << outcome->reason;
  EXPECT_EQ(sink.startedCount(), 1);
  EXPECT_TRUE(sink.contains("handler ran"));
}

// The handler's own file failing to execute is the handler's failure: charged, so a broken
// handler ends in the DLQ instead of waiting forever.
TEST_F(SandboxSetup, AHandlerFileThatCannotExecuteIsAChargedFailure) {
  app_.script("bin/broken.sh", "");
  app_.file("bin/broken.sh", "#!/nonexistent/interpreter\n");
  ::chmod((app_.path() / "bin/broken.sh").c_str(), 0755);
  CollectingSink sink;
  const auto outcome = sandbox_->run(app_.spec(Language::kExec, "bin/broken.sh"), sink);
  ASSERT_TRUE(outcome.ok()) << outcome.error().message;
  EXPECT_FALSE(outcome->succeeded);
  EXPECT_EQ(outcome->reason, "exit 127");
  EXPECT_EQ(sink.startedCount(), 1);
  EXPECT_TRUE(sink.contains("cannot execute /app/bin/broken.sh")) << sink.text("");
}

}  // namespace
}  // namespace relay::runtime::testing
