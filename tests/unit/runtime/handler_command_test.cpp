#include "runtime/handler_command.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "runtime/handover.h"

namespace relay::runtime {
namespace {

std::string valueOf(const std::vector<std::pair<std::string, std::string>>& env,
                    const std::string& key) {
  for (const auto& [name, value] : env) {
    if (name == key) return value;
  }
  return "<unset>";
}

InvocationSpec spec(Language language, std::string handler) {
  InvocationSpec s;
  s.app = "users";
  s.language = language;
  s.handler = std::move(handler);
  s.message_id = "1700000000000-0";
  s.attempt = 3;
  s.trigger = Trigger::kSchedule;
  return s;
}

TEST(HandlerEnvironment, CarriesRelayVariablesAndTheAppEnv) {
  InvocationSpec s = spec(Language::kPython3, "events.created.handler");
  s.app_env = {{"LOG_LEVEL", "debug"}};
  const auto env = handlerEnvironment(s);
  EXPECT_EQ(valueOf(env, "LOG_LEVEL"), "debug");
  EXPECT_EQ(valueOf(env, "RELAY_HANDLER"), "events.created.handler");
  EXPECT_EQ(valueOf(env, "RELAY_APP"), "users");
  EXPECT_EQ(valueOf(env, "RELAY_MESSAGE_ID"), "1700000000000-0");
  EXPECT_EQ(valueOf(env, "RELAY_ATTEMPT"), "3");
  EXPECT_EQ(valueOf(env, "RELAY_INVOCATION_ID"), "1700000000000-0/users/events.created.handler");
  EXPECT_EQ(valueOf(env, "RELAY_TRIGGER"), "schedule");
}

TEST(HandlerEnvironment, AppEnvCannotForgeRelayVariablesOrDuplicateKeys) {
  InvocationSpec s = spec(Language::kExec, "bin/run");
  s.app_env = {{"RELAY_ATTEMPT", "99"}, {"PATH", "/opt/bin"}};
  const auto env = handlerEnvironment(s);
  EXPECT_EQ(valueOf(env, "RELAY_ATTEMPT"), "3");
  EXPECT_EQ(valueOf(env, "PATH"), "/opt/bin");
  EXPECT_EQ(
      std::count_if(env.begin(), env.end(), [](const auto& kv) { return kv.first == "PATH"; }), 1);
}

TEST(HandlerCommand, ExecRunsTheFileUnderTheAppRoot) {
  EXPECT_EQ(handlerCommand(spec(Language::kExec, "bin/on-insert.sh"), "/app"),
            (std::vector<std::string>{"/app/bin/on-insert.sh"}));
}

TEST(HandlerCommand, InterpretersGetTheBootstrapHandlerAndRoot) {
  const auto python = handlerCommand(spec(Language::kPython3, "a.b.fn"), "/app");
  ASSERT_EQ(python.size(), 5u);
  EXPECT_EQ(python[0], "python3");
  EXPECT_EQ(python[2], pythonBootstrap());
  EXPECT_EQ(python[3], "a.b.fn");
  EXPECT_EQ(python[4], "/app");
  const auto node = handlerCommand(spec(Language::kNode, "a.b.fn"), "/srv/app");
  EXPECT_EQ(node[0], "node");
  EXPECT_EQ(node[2], nodeBootstrap());
  EXPECT_EQ(node[4], "/srv/app");
}

TEST(WarmEnvironment, HoldsNothingOfAnInvocationAndTheAppsEnvOnlyWhenAskedForInterpreters) {
  InvocationSpec exec = spec(Language::kExec, "bin/h");
  exec.app_env = {{"SECRET", "s"}};
  exec.message_id = "1-1";
  InvocationSpec python = exec;
  python.language = Language::kPython3;
  for (const InvocationSpec& warm : {exec, python}) {
    for (const std::string& var : warmEnvironment(warm, /*app_env=*/true)) {
      EXPECT_NE(var.rfind("RELAY_", 0), 0u) << var;
    }
  }
  const auto has = [](const std::vector<std::string>& env, const std::string& var) {
    return std::find(env.begin(), env.end(), var) != env.end();
  };
  EXPECT_FALSE(has(warmEnvironment(exec, /*app_env=*/true), "SECRET=s"));
  // A prewarmed interpreter runs no app code before its hand-over: no app env at start.
  EXPECT_FALSE(has(warmEnvironment(python, /*app_env=*/false), "SECRET=s"));
  EXPECT_TRUE(has(warmEnvironment(python, /*app_env=*/true), "SECRET=s"));
  EXPECT_TRUE(has(warmEnvironment(exec, /*app_env=*/false), "PATH=/usr/local/bin:/usr/bin:/bin"));
}

TEST(HandoverInput, IsTheColdStartsCommandAndEnvironmentThenTheEvent) {
  InvocationSpec invocation = spec(Language::kExec, "bin/h");
  invocation.message_id = "1-1";
  invocation.input = R"({"a":1})";
  const std::string input = handoverInput(invocation, "/app");
  const std::size_t newline = input.find('\n');
  auto header = decodeHandoverHeader(input.substr(0, newline));
  ASSERT_TRUE(header.ok());
  auto handover = decodeHandoverPayload(*header, input.substr(newline + 1, header->bytes));
  ASSERT_TRUE(handover.ok());
  EXPECT_EQ(handover->argv, handlerCommand(invocation, "/app"));
  EXPECT_EQ(handover->env, handlerEnvironmentStrings(invocation));
  EXPECT_EQ(input.substr(newline + 1 + header->bytes), R"({"a":1})");
}

// A prewarmed interpreter starts without the app's env (no app code before the hand-over), so
// an app whose env only takes effect at start-up starts cold instead.
TEST(Prewarmable, AppsWhoseEnvAnInterpreterReadsOnlyAtStartStartCold) {
  InvocationSpec spec;
  spec.language = Language::kPython3;
  spec.app_env = {{"LOG_LEVEL", "debug"}, {"PYTHONPATH", "/app/vendor"}};
  EXPECT_TRUE(prewarmable(spec));
  for (const char* key : {"PYTHONSTARTUP", "PYTHONWARNINGS", "PYTHONHOME", "LD_PRELOAD", "LANG",
                          "LC_ALL", "TZ", "GCONV_PATH", "MALLOC_ARENA_MAX"}) {
    spec.app_env = {{key, "x"}};
    EXPECT_FALSE(prewarmable(spec)) << key;
  }
  spec.language = Language::kNode;
  for (const char* key : {"NODE_OPTIONS", "NODE_PATH", "UV_THREADPOOL_SIZE", "LD_LIBRARY_PATH"}) {
    spec.app_env = {{key, "x"}};
    EXPECT_FALSE(prewarmable(spec)) << key;
  }
  spec.app_env = {{"PYTHONPATH", "/x"}, {"API_URL", "https://example.com"}};
  EXPECT_TRUE(prewarmable(spec));
  // exec handlers are started by relay-launcher with the handed env, whatever it holds.
  spec.language = Language::kExec;
  spec.app_env = {{"LD_PRELOAD", "/app/x.so"}, {"NODE_OPTIONS", "--require /app/x.js"}};
  EXPECT_TRUE(prewarmable(spec));
}

TEST(WarmBootstrap, PythonTakesTheWorkingDirectoryOffTheImportPathUntilTheHandOver) {
  const std::vector<std::string> warm = warmHandlerCommand(Language::kPython3, "");
  ASSERT_EQ(warm.size(), 3u);
  const std::string& code = warm[2];
  const std::size_t removed = code.find("del sys.path[0]");
  const std::size_t first_import = code.find("import asyncio");
  ASSERT_NE(removed, std::string::npos);
  EXPECT_LT(removed, first_import);
  EXPECT_NE(code.find("os.environ.get(\"PYTHONPATH\""), std::string::npos);
}

}  // namespace
}  // namespace relay::runtime
