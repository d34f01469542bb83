// The docker runtime against a real dockerd (started by scripts/test): the handler contract
// through the Engine API, container lifecycle and the unavailable cases.
#include <sys/stat.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>
#include <thread>
#include <vector>

#include "integration/docker/docker_fixture.h"

namespace relay::runtime::testing {
namespace {

using namespace std::chrono_literals;

// Reassembles the bytes `od -An -v -tx1` printed, one hex pair per byte.
std::string bytesFromHexDump(const std::string& dump) {
  std::string bytes;
  std::istringstream in(dump);
  std::string pair;
  while (in >> pair) bytes += static_cast<char>(std::stoi(pair, nullptr, 16));
  return bytes;
}

class DockerRuntime : public DockerFixture {};

TEST_F(DockerRuntime, StdinBytesAreIdenticalIncludingOneMebibyteAndNonAscii) {
  InvocationSpec spec = script("exec od -An -v -tx1");
  std::string input =
      "{\"name\":\"Sant Julià de Lòria ☃\",\"raw\":\"\xff\xfe\x00\x01\r\n\",\"pad\":\"";
  for (int i = 0; i < (1 << 20); ++i) input += static_cast<char>('a' + i % 26);
  input += "\"}";
  spec.input = input;
  const Outcome outcome = mustRun(spec);
  EXPECT_TRUE(outcome.succeeded) << outcome.reason;
  const std::string echoed = bytesFromHexDump(output(spec));
  EXPECT_EQ(echoed.size(), input.size());
  EXPECT_TRUE(echoed == input) << "the bytes the handler read differ from the event";
}

TEST_F(DockerRuntime, EmptyInputIsAnImmediateEof) {
  InvocationSpec spec = script("wc -c");
  spec.input = "";
  const Outcome outcome = mustRun(spec);
  EXPECT_TRUE(outcome.succeeded) << outcome.reason;
  EXPECT_EQ(output(spec), "0");
}

TEST_F(DockerRuntime, EnvironmentHasRelayVariablesAndAppEnv) {
  InvocationSpec spec = script("env | sort");
  spec.app_env = {{"LOG_LEVEL", "debug"}, {"GREETING", "grüß dich = hi"}, {"RELAY_APP", "forged"}};
  spec.attempt = 3;
  spec.trigger = Trigger::kReplay;
  const Outcome outcome = mustRun(spec);
  EXPECT_TRUE(outcome.succeeded) << outcome.reason;
  const std::string env = output(spec);
  for (const std::string& expected : std::vector<std::string>{
           "LOG_LEVEL=debug", "GREETING=grüß dich = hi", "RELAY_APP=testapp",
           "RELAY_HANDLER=bin/h.sh", "RELAY_MESSAGE_ID=" + spec.message_id, "RELAY_ATTEMPT=3",
           "RELAY_TRIGGER=replay", "RELAY_INVOCATION_ID=" + spec.invocationId(), "HOME=/tmp"}) {
    EXPECT_NE(env.find(expected + "\n"), std::string::npos) << expected << " missing in\n" << env;
  }
  EXPECT_EQ(env.find("forged"), std::string::npos);
}

TEST_F(DockerRuntime, NonZeroExitIsAFailureWithTheCode) {
  const Outcome outcome = mustRun(script("echo failing; exit 3"));
  EXPECT_FALSE(outcome.succeeded);
  EXPECT_EQ(outcome.reason, "exit 3");
}

TEST_F(DockerRuntime, DeathBySignalIsAFailureWithTheSignal) {
  EXPECT_EQ(mustRun(script("kill -TERM $$; sleep 5")).reason, "signal 15");
  EXPECT_EQ(mustRun(script("kill -KILL $$; sleep 5")).reason, "signal 9");
}

TEST_F(DockerRuntime, TimeoutStopsTheContainerAndRemovesIt) {
  InvocationSpec spec = script("echo started; sleep 30");
  spec.timeout = 1s;
  const Outcome outcome = mustRun(spec);
  EXPECT_FALSE(outcome.succeeded);
  EXPECT_EQ(outcome.reason, "timeout 1s");
  EXPECT_GE(outcome.duration, 1s);
  EXPECT_LT(outcome.duration, 10s);
  EXPECT_EQ(output(spec), "started");
  EXPECT_TRUE(containersOf(spec).empty());
}

TEST_F(DockerRuntime, TimeoutSendsSigkillWhenSigtermIsIgnored) {
  InvocationSpec spec = script("trap 'echo got TERM' TERM; while true; do sleep 0.1; done");
  spec.timeout = 1s;
  const Outcome outcome = mustRun(spec);
  EXPECT_EQ(outcome.reason, "timeout 1s");
  EXPECT_GE(outcome.duration, 3s);  // the 2 s grace after SIGTERM was honoured
  EXPECT_EQ(output(spec), "got TERM");
  EXPECT_TRUE(containersOf(spec).empty());
}

TEST_F(DockerRuntime, StdoutAndStderrAreForwardedLineByLineWithThePrefix) {
  InvocationSpec spec = script("echo out-1; echo err-1 >&2; echo out-2; printf 'no-newline'");
  const Outcome outcome = mustRun(spec);
  EXPECT_TRUE(outcome.succeeded) << outcome.reason;
  EXPECT_THAT(sink_.lines(), ::testing::UnorderedElementsAre(
                                 "[testapp/bin/h.sh] out-1", "[testapp/bin/h.sh] err-1",
                                 "[testapp/bin/h.sh] out-2", "[testapp/bin/h.sh] no-newline"));
}

TEST_F(DockerRuntime, HugeOutputIsStreamedInBoundedLines) {
  class CountingSink final : public OutputSink {
   public:
    void line(std::string_view text) override {
      ++lines;
      longest = std::max(longest, text.size());
    }
    std::size_t lines = 0;
    std::size_t longest = 0;
  } counting;
  InvocationSpec spec = script("head -c 20000000 /dev/zero | tr '\\0' 'a'");
  const auto outcome = runtime_->run(spec, counting);
  ASSERT_TRUE(outcome.ok()) << outcome.error().message;
  EXPECT_TRUE(outcome->succeeded) << outcome->reason;
  EXPECT_EQ(counting.lines, (20'000'000 + 65535) / 65536);
  EXPECT_EQ(counting.longest, std::string("[testapp/bin/h.sh] ").size() + 65536);
}

TEST_F(DockerRuntime, HandlerThatIgnoresStdinStillSucceeds) {
  InvocationSpec spec = script("exit 0");
  const std::string big(4 << 20, 'x');
  spec.input = big;
  const Outcome outcome = mustRun(spec);
  EXPECT_TRUE(outcome.succeeded) << outcome.reason;
}

TEST_F(DockerRuntime, ContainerIsRemovedAfterSuccessAndAfterFailure) {
  const InvocationSpec ok = script("exit 0");
  EXPECT_TRUE(mustRun(ok).succeeded);
  EXPECT_TRUE(containersOf(ok).empty());

  app_.script("bin/fail.sh", "exit 1");
  InvocationSpec failing = spec(Language::kExec, "bin/fail.sh");
  EXPECT_EQ(mustRun(failing).reason, "exit 1");
  EXPECT_TRUE(containersOf(failing).empty());
}

TEST_F(DockerRuntime, MissingImageIsUnavailableNotAFailedOutcome) {
  InvocationSpec spec = script("exit 0");
  spec.image = "relay-test/absent:never";
  const auto outcome = runtime_->run(spec, sink_);
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.error().kind, ErrorKind::kUnavailable);
  EXPECT_EQ(outcome.error().message,
            "image relay-test/absent:never not present (no registry is reached; load it with "
            "docker load)");
  const Availability availability = runtime_->availability(spec);
  EXPECT_FALSE(availability.available);
  EXPECT_EQ(availability.reason, outcome.error().message);
  EXPECT_TRUE(containersOf(spec).empty());
  EXPECT_EQ(sink_.startedCount(), 0) << "the create call failed: nothing started";
}

TEST_F(DockerRuntime, UnreachableDaemonIsUnavailable) {
  docker::DockerSettings settings = dockerTestSettings();
  settings.docker_host = "unix://" + app_.path().string() + "/no-daemon.sock";
  auto unreachable = docker::DockerRuntime::create(clock_, settings);
  ASSERT_TRUE(unreachable.ok()) << unreachable.error().message;
  const InvocationSpec spec = script("exit 0");
  const auto outcome = (*unreachable)->run(spec, sink_);
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.error().kind, ErrorKind::kUnavailable);
  const std::string expected =
      "cannot connect to docker daemon at " + settings.docker_host + ": No such file or directory";
  EXPECT_EQ(outcome.error().message, expected);
  const Availability availability = (*unreachable)->availability(spec);
  EXPECT_FALSE(availability.available);
  EXPECT_EQ(availability.reason, expected);
}

TEST_F(DockerRuntime, NonUnixDockerHostIsRejected) {
  docker::DockerSettings settings;
  settings.docker_host = "tcp://127.0.0.1:2375";
  const auto runtime = docker::DockerRuntime::create(clock_, settings);
  ASSERT_FALSE(runtime.ok());
  EXPECT_EQ(runtime.error().kind, ErrorKind::kInvalidArgument);
}

TEST_F(DockerRuntime, AvailableWhenTheDaemonAnswersAndTheImageIsPresent) {
  const Availability availability = runtime_->availability(script("exit 0"));
  EXPECT_TRUE(availability.available) << availability.reason;
}

TEST_F(DockerRuntime, MissingHandlerFileIsUnavailable) {
  const InvocationSpec spec = this->spec(Language::kExec, "bin/nope.sh");
  const auto outcome = runtime_->run(spec, sink_);
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.error().kind, ErrorKind::kUnavailable);
  EXPECT_NE(outcome.error().message.find("bin/nope.sh"), std::string::npos);
  EXPECT_FALSE(runtime_->availability(spec).available);
}

TEST_F(DockerRuntime, AppDirectoryTheContainerUserCannotReadIsUnavailable) {
  const InvocationSpec spec = script("exit 0");
  ::chmod(app_.path().c_str(), 0700);
  const auto outcome = runtime_->run(spec, sink_);
  ::chmod(app_.path().c_str(), 0755);
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.error().kind, ErrorKind::kUnavailable);
  EXPECT_NE(outcome.error().message.find("not readable by the container user"), std::string::npos)
      << outcome.error().message;
}

TEST_F(DockerRuntime, PythonHandlerGetsTheDecodedEvent) {
  app_.file("events/created.py",
            "import os\n"
            "def handler(event):\n"
            "    print('table', event['table_name'], os.environ['RELAY_HANDLER'])\n");
  InvocationSpec spec = this->spec(Language::kPython3, "events.created.handler");
  spec.input = R"({"table_name":"users"})";
  const Outcome outcome = mustRun(spec);
  EXPECT_TRUE(outcome.succeeded) << outcome.reason << "\n" << output(spec);
  EXPECT_EQ(output(spec), "table users events.created.handler");
}

TEST_F(DockerRuntime, PythonExceptionFailsWithTheTraceback) {
  app_.file("h.py", "def fn(event):\n    raise ValueError('bad row')\n");
  const Outcome outcome = mustRun(spec(Language::kPython3, "h.fn"));
  EXPECT_EQ(outcome.reason, "exit 1");
  EXPECT_TRUE(sink_.contains("ValueError: bad row"));
}

TEST_F(DockerRuntime, NodeHandlerGetsTheDecodedEventAndRejectionsFail) {
  app_.file("orders/created.mjs",
            "export async function handler(event) { console.log('amount', event.amount); }\n");
  InvocationSpec spec = this->spec(Language::kNode, "orders.created.handler");
  spec.input = R"({"amount":1250})";
  const Outcome outcome = mustRun(spec);
  EXPECT_TRUE(outcome.succeeded) << outcome.reason << "\n" << output(spec);
  EXPECT_EQ(output(spec), "amount 1250");

  app_.file("h.mjs", "export async function fn() { throw new Error('rejected!'); }\n");
  EXPECT_EQ(mustRun(this->spec(Language::kNode, "h.fn")).reason, "exit 1");
  EXPECT_TRUE(sink_.contains("rejected!"));
}

TEST_F(DockerRuntime, DaemonErrorsNeverRevealEnvValues) {
  // The daemon quotes a rejected env entry in its error; the value may be a secret.
  InvocationSpec spec = script("exit 0");
  spec.app_env = {{"", "hunter2-secret-token"}};
  const auto outcome = runtime_->run(spec, sink_);
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_EQ(outcome.error().message.find("hunter2"), std::string::npos) << outcome.error().message;
  EXPECT_NE(outcome.error().message.find("invalid environment variable: =***"), std::string::npos)
      << outcome.error().message;
}

TEST_F(DockerRuntime, ConcurrentInvocationsRunIndependently) {
  constexpr int kInvocations = 4;
  app_.script("bin/echo.sh", "cat; echo \" from $RELAY_MESSAGE_ID\"");
  std::vector<CollectingSink> sinks(kInvocations);
  std::vector<Result<Outcome>> outcomes(kInvocations, Error::internal("not run"));
  std::vector<InvocationSpec> specs;
  std::vector<std::string> inputs;
  for (int i = 0; i < kInvocations; ++i) inputs.push_back("input-" + std::to_string(i));
  for (int i = 0; i < kInvocations; ++i) {
    specs.push_back(spec(Language::kExec, "bin/echo.sh"));
    specs.back().message_id += "-" + std::to_string(i);
    specs.back().input = inputs[i];
  }
  std::vector<std::thread> threads;
  for (int i = 0; i < kInvocations; ++i) {
    threads.emplace_back([&, i] { outcomes[i] = runtime_->run(specs[i], sinks[i]); });
  }
  for (std::thread& thread : threads) thread.join();
  for (int i = 0; i < kInvocations; ++i) {
    ASSERT_TRUE(outcomes[i].ok()) << outcomes[i].error().message;
    EXPECT_TRUE(outcomes[i]->succeeded) << outcomes[i]->reason;
    EXPECT_EQ(sinks[i].text("[testapp/bin/echo.sh] "), inputs[i] + " from " + specs[i].message_id);
    EXPECT_TRUE(containersOf(specs[i]).empty());
  }
}

}  // namespace
}  // namespace relay::runtime::testing
