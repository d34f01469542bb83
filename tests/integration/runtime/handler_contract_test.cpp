// The handler contract (docs/runtimes.md "Contract"), run against each backend: the same file is
// built once per backend with RELAY_TEST_BACKEND_* selecting it (PREWARMED: the sandbox backend
// with every invocation handed to a prewarmed sandbox; DOCKER with RELAY_TEST_PREWARMED_DOCKER:
// every invocation handed to a prewarmed container).
#include <fcntl.h>
#include <linux/keyctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <thread>

#include "integration/runtime/runtime_harness.h"
#include "integration/runtime/sandbox_harness.h"
#include "runtime/process/process_runtime.h"
#if defined(RELAY_TEST_BACKEND_DOCKER)
#include "integration/docker/docker_test_env.h"
#endif

namespace relay::runtime::testing {

#if defined(RELAY_TEST_BACKEND_SANDBOX) || defined(RELAY_TEST_BACKEND_PREWARMED)
// The sandbox runtime through runOnce (sandbox_harness.h): in the prewarmed build each run is
// handed to a sandbox prepared for it (docs/runtimes.md "Prewarmed sandboxes": the contract is
// the same either way).
class SandboxUnderTest final : public Runtime {
 public:
  explicit SandboxUnderTest(std::unique_ptr<SandboxRuntime> sandbox)
      : sandbox_(std::move(sandbox)) {}
  std::string_view name() const override { return "sandbox"; }
  Result<Outcome> run(const InvocationSpec& spec, OutputSink& output) override {
    return runOnce(*sandbox_, spec, output);
  }
  Availability availability(const InvocationSpec& spec) const override {
    return sandbox_->availability(spec);
  }

 private:
  std::unique_ptr<SandboxRuntime> sandbox_;
};
#endif

#if defined(RELAY_TEST_BACKEND_DOCKER)
// The docker runtime through runDockerOnce (docker_test_env.h): in the prewarmed build each run
// is handed to a container prepared for it (docs/runtimes.md "Prewarmed containers").
class DockerUnderTest final : public Runtime {
 public:
  explicit DockerUnderTest(std::unique_ptr<docker::DockerRuntime> docker)
      : docker_(std::move(docker)) {}
  std::string_view name() const override { return "docker"; }
  Result<Outcome> run(const InvocationSpec& spec, OutputSink& output) override {
    return runDockerOnce(*docker_, spec, output);
  }
  Availability availability(const InvocationSpec& spec) const override {
    return docker_->availability(spec);
  }

 private:
  std::unique_ptr<docker::DockerRuntime> docker_;
};
#endif

std::unique_ptr<Runtime> makeRuntime(Clock& clock) {
#if defined(RELAY_TEST_BACKEND_DOCKER)
  return std::make_unique<DockerUnderTest>(makeDockerTestRuntime(clock));
#elif defined(RELAY_TEST_BACKEND_SANDBOX) || defined(RELAY_TEST_BACKEND_PREWARMED)
  return std::make_unique<SandboxUnderTest>(makeSandboxTestRuntime(clock));
#else
  return std::make_unique<ProcessRuntime>(clock);
#endif
}

namespace {

const std::string kPrefix = "[testapp/";

class HandlerContract : public ::testing::Test {
 protected:
  Result<Outcome> run(const InvocationSpec& spec) { return runtime_->run(spec, sink_); }
  std::string output(const InvocationSpec& spec) const {
    return sink_.text("[" + spec.app + "/" + spec.handler + "] ");
  }

  SystemClock clock_;
  std::unique_ptr<Runtime> runtime_ = makeRuntime(clock_);
  TestApp app_;
  CollectingSink sink_;
};

TEST_F(HandlerContract, StdinBytesArriveVerbatimIncludingNonAsciiAndOneMebibyte) {
  app_.script("bin/cat.sh", "exec cat");
  InvocationSpec spec = app_.spec(Language::kExec, "bin/cat.sh");
  std::string input = "{\"name\":\"Sant Julià de Lòria\",\"raw\":\"\xff\xfe\",\"pad\":\"";
  input += std::string(1 << 20, 'p');
  input += "\"}";
  spec.input = input;
  const auto outcome = run(spec);
  ASSERT_TRUE(outcome.ok()) << outcome.error().message;
  EXPECT_TRUE(outcome->succeeded) << outcome->reason;
  // Lines over 64 KiB arrive in pieces; joined back they are the input, byte for byte.
  const std::string received = sink_.text("[testapp/bin/cat.sh] ", "");
  EXPECT_EQ(received.size(), input.size());
  EXPECT_TRUE(received == input);
}

TEST_F(HandlerContract, EnvironmentCarriesRelayVariablesAndAppEnv) {
  app_.script("bin/env.sh", "env | sort");
  InvocationSpec spec = app_.spec(Language::kExec, "bin/env.sh");
  spec.app_env = {{"LOG_LEVEL", "debug"}, {"RELAY_APP", "forged"}};
  spec.message_id = "1700000000000-7";
  spec.attempt = 2;
  spec.trigger = Trigger::kManual;
  const auto outcome = run(spec);
  ASSERT_TRUE(outcome.ok()) << outcome.error().message;
  const std::string env = output(spec);
  for (const char* expected :
       {"LOG_LEVEL=debug", "RELAY_APP=testapp", "RELAY_HANDLER=bin/env.sh",
        "RELAY_MESSAGE_ID=1700000000000-7", "RELAY_ATTEMPT=2", "RELAY_TRIGGER=manual",
        "RELAY_INVOCATION_ID=1700000000000-7/testapp/bin/env.sh"}) {
    EXPECT_NE(env.find(expected), std::string::npos) << expected << " missing in:\n" << env;
  }
  EXPECT_EQ(env.find("forged"), std::string::npos);
  EXPECT_EQ(env.find("HOSTNAME_OF_RELAY"), std::string::npos);
}

TEST_F(HandlerContract, RelaysOwnEnvironmentDoesNotLeakIn) {
  ::setenv("RELAY_TEST_SECRET", "hunter2", 1);
  app_.script("bin/env.sh", "env");
  const auto outcome = run(app_.spec(Language::kExec, "bin/env.sh"));
  ::unsetenv("RELAY_TEST_SECRET");
  ASSERT_TRUE(outcome.ok());
  EXPECT_FALSE(sink_.contains("hunter2"));
}

TEST_F(HandlerContract, DescriptorsRelayLeftInheritableDoNotReachTheHandler) {
  // A pipe opened without O_CLOEXEC, as hiredis and inherited descriptors are.
  int leaked[2];
  ASSERT_EQ(::pipe(leaked), 0);
  struct stat info {};
  ASSERT_EQ(::fstat(leaked[0], &info), 0);
  const std::string identity = "pipe:[" + std::to_string(info.st_ino) + "]";
  app_.script("bin/fds.sh", "ls -l /proc/$$/fd/; echo listed");
  const auto outcome = run(app_.spec(Language::kExec, "bin/fds.sh"));
  ::close(leaked[0]);
  ::close(leaked[1]);
  ASSERT_TRUE(outcome.ok()) << outcome.error().message;
  EXPECT_TRUE(sink_.contains("listed"));
  EXPECT_FALSE(sink_.contains(identity)) << sink_.text("");
}

TEST_F(HandlerContract, HandlerDoesNotShareRelaysSessionKeyring) {
  // Relay in a named session keyring holding a key of its own (as under systemd or runc).
  ASSERT_GE(::syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, "relay-contract-test"), 0);
  const char secret[] = "contract-secret";
  ASSERT_GT(::syscall(SYS_add_key, "user", "relay-contract-secret", secret, sizeof secret - 1,
                      KEY_SPEC_SESSION_KEYRING),
            0);
  app_.file("keys.py",
            "import ctypes, platform\n"
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            "NR = {'x86_64': 250, 'aarch64': 219}[platform.machine()]\n"
            "def fn(event):\n"
            "    name = ctypes.create_string_buffer(256)\n"
            "    libc.syscall(NR, 6, -3, name, 256)  # KEYCTL_DESCRIBE @s\n"
            "    print('session', name.value.decode())\n"
            "    key = libc.syscall(NR, 10, -3, b'user', b'relay-contract-secret', 0)\n"
            "    print('found' if key > 0 else 'not found')\n");
  const InvocationSpec spec = app_.spec(Language::kPython3, "keys.fn");
  const auto outcome = run(spec);
  ASSERT_TRUE(outcome.ok()) << outcome.error().message;
  EXPECT_TRUE(outcome->succeeded) << outcome->reason << output(spec);
  EXPECT_TRUE(sink_.contains("not found")) << output(spec);
  EXPECT_FALSE(sink_.contains("relay-contract-test")) << output(spec);
}

TEST_F(HandlerContract, NonZeroExitIsAFailureWithTheCode) {
  app_.script("bin/fail.sh", "echo failing; exit 3");
  const auto outcome = run(app_.spec(Language::kExec, "bin/fail.sh"));
  ASSERT_TRUE(outcome.ok());
  EXPECT_FALSE(outcome->succeeded);
  EXPECT_EQ(outcome->reason, "exit 3");
}

TEST_F(HandlerContract, DeathBySignalIsAFailureWithTheSignal) {
  app_.script("bin/die.sh", "kill -9 $$");
  const auto outcome = run(app_.spec(Language::kExec, "bin/die.sh"));
  ASSERT_TRUE(outcome.ok());
  EXPECT_FALSE(outcome->succeeded);
  EXPECT_EQ(outcome->reason, "signal 9");
}

TEST_F(HandlerContract, TimeoutKillsTheWholeTree) {
  // The background child writes a heartbeat file; after the timeout it must stop.
  app_.script("bin/hang.sh",
              "(while true; do date +%s%N > /tmp/beat; sleep 0.05; done) & sleep 60");
  InvocationSpec spec = app_.spec(Language::kExec, "bin/hang.sh");
  spec.timeout = std::chrono::milliseconds(300);
  const auto outcome = run(spec);
  ASSERT_TRUE(outcome.ok());
  EXPECT_FALSE(outcome->succeeded);
  EXPECT_EQ(outcome->reason, "timeout 300ms");
  EXPECT_LT(outcome->duration, std::chrono::seconds(10));
}

TEST_F(HandlerContract, TimeoutEscalatesToSigkillWhenTermIsIgnored) {
  app_.script("bin/stubborn.sh", "trap '' TERM; while true; do sleep 0.1; done");
  InvocationSpec spec = app_.spec(Language::kExec, "bin/stubborn.sh");
  // Long enough for the shell to have set its trap when SIGTERM comes, even on a loaded
  // machine (with 200 ms, a busybox shell freshly unpacked on an image root sometimes had not,
  // and died of the SIGTERM at once).
  spec.timeout = std::chrono::seconds(1);
  const auto outcome = run(spec);
  ASSERT_TRUE(outcome.ok());
  EXPECT_EQ(outcome->reason, "timeout 1s");
  EXPECT_GE(outcome->duration, std::chrono::seconds(2));  // the SIGKILL grace was honoured
}

// docs/pipeline.md "Cancellation": a cancel stops the handler as a timeout would (SIGTERM to
// the whole tree or container first), at once, and the outcome says cancelled.
TEST_F(HandlerContract, ACancelStopsTheHandlerAtOnceWithSigtermFirst) {
  app_.script("bin/hang.sh",
              "trap 'echo got TERM; exit 143' TERM\n(while true; do sleep 0.05; done) &\n"
              "echo ready\nwhile true; do sleep 0.05; done");
  InvocationSpec spec = app_.spec(Language::kExec, "bin/hang.sh");
  spec.timeout = std::chrono::seconds(60);
  CancelSignal cancel;
  spec.cancel = &cancel;
  std::thread canceller([&] {
    // Once the handler runs with its trap set (it said "ready"): a loaded machine may take
    // seconds to start a sandbox or a container.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (output(spec).find("ready") == std::string::npos &&
           std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    cancel.request();
  });
  const auto outcome = run(spec);
  canceller.join();
  ASSERT_TRUE(outcome.ok()) << outcome.error().message;
  EXPECT_FALSE(outcome->succeeded);
  EXPECT_TRUE(outcome->cancelled);
  EXPECT_EQ(outcome->reason, "cancelled");
  EXPECT_LT(outcome->duration, std::chrono::seconds(10));  // not its 60 s timeout
  EXPECT_NE(output(spec).find("got TERM"), std::string::npos) << output(spec);
}

// A cancel that came before the handler started stops it as soon as it starts.
TEST_F(HandlerContract, ACancelRequestedBeforeTheStartStopsTheHandlerAtItsStart) {
  app_.script("bin/hang.sh", "while true; do sleep 0.05; done");
  InvocationSpec spec = app_.spec(Language::kExec, "bin/hang.sh");
  spec.timeout = std::chrono::seconds(60);
  CancelSignal cancel;
  cancel.request();
  spec.cancel = &cancel;
  const auto outcome = run(spec);
  ASSERT_TRUE(outcome.ok()) << outcome.error().message;
  EXPECT_TRUE(outcome->cancelled);
  EXPECT_LT(outcome->duration, std::chrono::seconds(10));
}

TEST_F(HandlerContract, StdoutAndStderrAreForwardedLineByLineWithThePrefix) {
  app_.script("bin/talk.sh", "echo out-1; echo err-1 >&2; printf 'no-newline'");
  const auto outcome = run(app_.spec(Language::kExec, "bin/talk.sh"));
  ASSERT_TRUE(outcome.ok());
  EXPECT_TRUE(outcome->succeeded);
  const auto lines = sink_.lines();
  EXPECT_NE(std::find(lines.begin(), lines.end(), "[testapp/bin/talk.sh] out-1"), lines.end());
  EXPECT_NE(std::find(lines.begin(), lines.end(), "[testapp/bin/talk.sh] err-1"), lines.end());
  EXPECT_NE(std::find(lines.begin(), lines.end(), "[testapp/bin/talk.sh] no-newline"), lines.end());
}

TEST_F(HandlerContract, HugeOutputIsStreamedNotBuffered) {
  class CountingSink final : public OutputSink {
   public:
    void line(std::string_view text) override {
      bytes += text.size();
      ++lines;
    }
    std::size_t bytes = 0;
    std::size_t lines = 0;
  } counting;
  app_.script("bin/flood.sh", "head -c 50000000 /dev/zero | tr '\\0' 'a'");
  const auto outcome = runtime_->run(app_.spec(Language::kExec, "bin/flood.sh"), counting);
  ASSERT_TRUE(outcome.ok());
  EXPECT_TRUE(outcome->succeeded) << outcome->reason;
  // One 50 MB line arrives as 64 KiB pieces, each with the prefix.
  EXPECT_EQ(counting.lines, (50'000'000 + 65535) / 65536);
}

TEST_F(HandlerContract, HandlerThatIgnoresStdinStillSucceeds) {
  app_.script("bin/ignore.sh", "exit 0");
  InvocationSpec spec = app_.spec(Language::kExec, "bin/ignore.sh");
  const std::string big(4 << 20, 'x');
  spec.input = big;
  const auto outcome = run(spec);
  ASSERT_TRUE(outcome.ok()) << outcome.error().message;
  EXPECT_TRUE(outcome->succeeded) << outcome->reason;
}

TEST_F(HandlerContract, MissingHandlerFileIsUnavailableNotAFailure) {
  const auto outcome = run(app_.spec(Language::kExec, "bin/nope.sh"));
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.error().kind, ErrorKind::kUnavailable);
  EXPECT_NE(outcome.error().message.find("bin/nope.sh"), std::string::npos);
  EXPECT_EQ(sink_.startedCount(), 0) << "an Error never reports a start";
}

// OutputSink::started() (docs/runtimes.md "Contract"): once per run that ends in an Outcome,
// whatever the outcome, and before the handler's first line.
TEST_F(HandlerContract, StartedIsReportedOnceBeforeTheHandlersFirstLine) {
  app_.script("bin/ok.sh", "echo first");
  app_.script("bin/fail.sh", "echo first; exit 3");
  app_.script("bin/hang.sh", "echo first; sleep 60");
  for (const char* handler : {"bin/ok.sh", "bin/fail.sh", "bin/hang.sh"}) {
    CollectingSink sink;
    InvocationSpec spec = app_.spec(Language::kExec, handler);
    spec.timeout = std::chrono::milliseconds(handler == std::string("bin/hang.sh") ? 1500 : 20000);
    const auto outcome = runtime_->run(spec, sink);
    ASSERT_TRUE(outcome.ok()) << handler << ": " << outcome.error().message;
    EXPECT_EQ(sink.startedCount(), 1) << handler;
    EXPECT_EQ(sink.linesBeforeStart(), 0u) << handler;
    EXPECT_TRUE(sink.contains("first")) << handler;
  }
}

TEST_F(HandlerContract, StartedIsReportedForInterpretedHandlersToo) {
  app_.file("jobs.py", "def run(event):\n    print('python ran')\n");
  app_.file("jobs.mjs", "export function run(event) { console.log('node ran'); }\n");
  for (const Language language : {Language::kPython3, Language::kNode}) {
    CollectingSink sink;
    const auto outcome = runtime_->run(app_.spec(language, "jobs.run"), sink);
    ASSERT_TRUE(outcome.ok()) << outcome.error().message;
    EXPECT_TRUE(outcome->succeeded) << outcome->reason;
    EXPECT_EQ(sink.startedCount(), 1);
    EXPECT_EQ(sink.linesBeforeStart(), 0u);
  }
}

TEST_F(HandlerContract, PythonHandlerGetsTheDecodedEvent) {
  app_.file("events/created.py",
            "import os\n"
            "def handler(event):\n"
            "    print('table', event['table_name'], os.environ['RELAY_HANDLER'])\n");
  InvocationSpec spec = app_.spec(Language::kPython3, "events.created.handler");
  spec.input = R"({"table_name":"users"})";
  const auto outcome = run(spec);
  ASSERT_TRUE(outcome.ok()) << outcome.error().message;
  EXPECT_TRUE(outcome->succeeded) << outcome->reason << "\n" << output(spec);
  EXPECT_EQ(output(spec), "table users events.created.handler");
}

TEST_F(HandlerContract, PythonExceptionFailsWithTraceback) {
  app_.file("h.py", "def fn(event):\n    raise ValueError('bad row')\n");
  const auto outcome = run(app_.spec(Language::kPython3, "h.fn"));
  ASSERT_TRUE(outcome.ok());
  EXPECT_EQ(outcome->reason, "exit 1");
  EXPECT_TRUE(sink_.contains("ValueError: bad row"));
}

TEST_F(HandlerContract, PythonSysExitCodeIsTheOutcome) {
  app_.file("h.py", "import sys\ndef fn(event):\n    sys.exit(4)\n");
  const auto outcome = run(app_.spec(Language::kPython3, "h.fn"));
  ASSERT_TRUE(outcome.ok());
  EXPECT_EQ(outcome->reason, "exit 4");
}

TEST_F(HandlerContract, PythonCoroutineHandlersAreAwaited) {
  app_.file("h.py", "async def fn(event):\n    raise RuntimeError('async boom')\n");
  const auto outcome = run(app_.spec(Language::kPython3, "h.fn"));
  ASSERT_TRUE(outcome.ok());
  EXPECT_EQ(outcome->reason, "exit 1");
  EXPECT_TRUE(sink_.contains("async boom"));
}

TEST_F(HandlerContract, NodeEsmHandlerGetsTheDecodedEvent) {
  app_.file("orders/created.mjs",
            "export async function handler(event) { console.log('amount', event.amount); }\n");
  InvocationSpec spec = app_.spec(Language::kNode, "orders.created.handler");
  spec.input = R"({"amount":1250})";
  const auto outcome = run(spec);
  ASSERT_TRUE(outcome.ok()) << outcome.error().message;
  EXPECT_TRUE(outcome->succeeded) << outcome->reason << "\n" << output(spec);
  EXPECT_EQ(output(spec), "amount 1250");
}

TEST_F(HandlerContract, NodeCommonJsExportsWork) {
  app_.file("lib/h.cjs", "exports.fn = (event) => { console.log('cjs', event.ok); };\n");
  const auto outcome = run(app_.spec(Language::kNode, "lib.h.fn"));
  ASSERT_TRUE(outcome.ok());
  EXPECT_TRUE(outcome->succeeded) << outcome->reason;
  EXPECT_TRUE(sink_.contains("cjs undefined"));
}

TEST_F(HandlerContract, NodeRejectedPromiseFails) {
  app_.file("h.mjs", "export async function fn() { throw new Error('rejected!'); }\n");
  const auto outcome = run(app_.spec(Language::kNode, "h.fn"));
  ASSERT_TRUE(outcome.ok());
  EXPECT_EQ(outcome->reason, "exit 1");
  EXPECT_TRUE(sink_.contains("rejected!"));
}

TEST_F(HandlerContract, NodeSynchronousThrowFails) {
  app_.file("h.mjs", "export function fn() { throw new TypeError('sync throw'); }\n");
  const auto outcome = run(app_.spec(Language::kNode, "h.fn"));
  ASSERT_TRUE(outcome.ok());
  EXPECT_EQ(outcome->reason, "exit 1");
  EXPECT_TRUE(sink_.contains("sync throw"));
}

}  // namespace
}  // namespace relay::runtime::testing
