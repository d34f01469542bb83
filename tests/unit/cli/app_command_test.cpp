#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "common/rfc3339.h"
#include "fakes/temp_dir.h"
#include "support/cli_run.h"

namespace relay::cli {
namespace {

using testing::run;
using testing::ScopedEnv;

const std::string kExamples = std::string(RELAY_SOURCE_DIR) + "/examples/apps";

// An apps root with a valid app `good`, a broken app `bad` and a plain directory `docs`.
class AppCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    root_.write("good/bin/h.sh", "#!/bin/sh\n", 0755);
    root_.write("good/template.yaml",
                "runtime: exec\nenv: {MODE: fast}\nevents:\n  - handler: bin/h.sh\n"
                "    pattern: {table_name: [users], id: [\"7\", 7]}\n");
    root_.write("bad/template.yaml", "runtime: node\nconcurrency: 0\n");
    root_.write("docs/README.md", "");
  }
  std::string root() const { return root_.path().string(); }

  relay::testing::TempDir root_;
  ScopedEnv no_runtime_{"RELAY_RUNTIME", std::nullopt};
  ScopedEnv no_apps_{"RELAY_APPS", std::nullopt};
  // No Redis answers here: `app ls` lists the apps anyway, the paused state unknown (the
  // paused apps themselves are tested against a real server in tests/integration/cli).
  ScopedEnv no_redis_{"REDIS_URI", "127.0.0.1:1"};
};

TEST_F(AppCommand, LsPrintsATable) {
  const auto result = run({"app", "ls", "--apps", root(), "--runtime", "process"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out,
            "NAME  RUNTIME  RULES  SCHEDULES  LOADED  AVAILABLE  REASON\n"
            "bad   node     -      -          no      no         invalid template.yaml:2:14: "
            "concurrency: must be between 1 and 1024, got 0\n"
            "good  exec     1      0          yes     yes\n");
  EXPECT_EQ(result.err.rfind("note: " + root() +
                                 "/docs is not an app: no template.yaml\n"
                                 "note: paused apps unknown (cannot reach Redis at 127.0.0.1:1: "
                                 "Connection refused)\n",
                             0),
            0u)
      << result.err;
}

TEST_F(AppCommand, LsJsonIsAnArrayOfObjects) {
  const auto result = run({"app", "ls", "--json", "--apps", root(), "--runtime", "process"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  ASSERT_TRUE(json.is_array());
  ASSERT_EQ(json.size(), 2u);
  EXPECT_EQ(json[0]["name"], "bad");
  EXPECT_EQ(json[0]["runtime"], "node");
  EXPECT_EQ(json[0]["loaded"], false);
  EXPECT_EQ(json[0]["available"], false);
  EXPECT_EQ(json[0]["reason"],
            "invalid template.yaml:2:14: concurrency: must be between 1 and 1024, got 0");
  EXPECT_EQ(json[0]["errors"][0],
            root() + "/bad/template.yaml:2:14: concurrency: must be between 1 and 1024, got 0");
  EXPECT_TRUE(json[0]["rules"].is_null());
  EXPECT_EQ(json[1]["name"], "good");
  EXPECT_EQ(json[1]["runtime"], "exec");
  EXPECT_EQ(json[1]["rules"], 1);
  EXPECT_EQ(json[1]["schedules"], 0);
  EXPECT_EQ(json[1]["loaded"], true);
  EXPECT_EQ(json[1]["available"], true);
  EXPECT_EQ(json[1]["reason"], "");
}

TEST_F(AppCommand, LsOfAMissingRootFails) {
  const auto result = run({"app", "ls", "--apps", root() + "/nope"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.err, "relay app ls: apps root " + root() + "/nope does not exist\n");
}

TEST_F(AppCommand, LsTakesTheRootFromRelayApps) {
  ScopedEnv apps("RELAY_APPS", root());
  const auto result = run({"app", "ls", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(nlohmann::json::parse(result.out).size(), 2u);
}

TEST_F(AppCommand, AnEmptyRelayAppsIsABadValueAsForRelayStart) {
  ScopedEnv apps("RELAY_APPS", "");
  for (const std::string command : {"ls", "inspect"}) {
    std::vector<std::string> args = {"app", command, "--runtime", "process"};
    if (command == "inspect") args.push_back("good");
    const auto result = run(args);
    EXPECT_EQ(result.exit_code, 2) << command;
    EXPECT_EQ(result.err, "relay app " + command + ": RELAY_APPS: expected a directory\n");
    EXPECT_EQ(result.out, "");
  }
  const auto start = run({"start"});
  EXPECT_EQ(start.exit_code, 2);
  EXPECT_EQ(start.err, "relay start: RELAY_APPS: expected a directory\n");
}

TEST_F(AppCommand, LsRejectsAnUnknownRuntime) {
  const auto result = run({"app", "ls", "--apps", root(), "--runtime", "chroot"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.out, "");
}

TEST_F(AppCommand, InspectShowsTheEffectiveConfiguration) {
  const auto result = run({"app", "inspect", "good", "--apps", root(), "--runtime", "process"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out,
            "name:         good\n"
            "dir:          " +
                root() +
                "/good\n"
                "runtime:      exec\n"
                "image:        debian:12-slim\n"
                "concurrency:  4\n"
                "throttle:     (none)\n"
                "network:      false\n"
                "env:          MODE=fast\n"
                "resources:    memory 256MiB, cpus 1, pids 128\n"
                "loaded:       yes\n"
                "available:    yes\n"
                "rules:        1\n"
                "  [0] bin/h.sh  (template.yaml line 4)\n"
                "      pattern:  {\"table_name\": [\"users\"], \"id\": [\"7\", 7]}\n"
                "      timeout:  30s, retries: 4\n"
                "schedules:    0\n"
                "archive:      (none)\n");
}

// docs/apps.md "Flow control": the app's throttle and each rule's limits, in words and in JSON.
class AppInspectFlow : public ::testing::Test {
 protected:
  void SetUp() override {
    root_.write("pay/bin/charge.sh", "#!/bin/sh\n", 0755);
    root_.write("pay/bin/sync.sh", "#!/bin/sh\n", 0755);
    root_.write("pay/bin/digest.sh", "#!/bin/sh\n", 0755);
    root_.write("pay/template.yaml", R"(runtime: exec
throttle: {limit: 20, period: 1s, burst: 5}
events:
  - handler: bin/charge.sh
    pattern: {kind: [charge]}
    concurrency: {limit: 2, key: tenant_id}
    dedupe: {key: order.id}
  - handler: bin/sync.sh
    pattern: {kind: [sync]}
    singleton: {key: account}
    throttle: {limit: 3, period: 1m}
  - handler: bin/digest.sh
    pattern: {kind: [digest]}
    debounce: {key: user, period: 30s, max_wait: 2m}
)");
  }
  testing::CliRun inspect(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"app",       "inspect", "pay", "--apps", root_.path().string(),
                                     "--runtime", "process"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run(args);
  }

  relay::testing::TempDir root_;
  ScopedEnv no_redis_{"REDIS_URI", "127.0.0.1:1"};
};

TEST_F(AppInspectFlow, PrintsTheAppThrottleAndEachRulesLimits) {
  const auto result = inspect();
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("throttle:     20 per 1s, burst 5 (the whole app)\n"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("      timeout:  30s, retries: 4\n"
                            "      concurrency: 2 at a time per tenant_id\n"
                            "      dedupe: by order.id for 1d\n"
                            "  [1] bin/sync.sh"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("      throttle: 3 per 1m\n"
                            "      singleton: one at a time per account, a newer event replaces "
                            "a waiting one\n"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("      debounce: by user, runs the latest after 30s quiet, at most "
                            "2m after the first\n"),
            std::string::npos)
      << result.out;
}

TEST_F(AppInspectFlow, JsonHasTheAppThrottleAndAFlowObjectPerRule) {
  const auto result = inspect({"--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["throttle"],
            nlohmann::json::parse(R"({"limit":20,"period":"1s","period_ms":1000,"burst":5})"));
  const auto& rules = json["rules"];
  ASSERT_EQ(rules.size(), 3u);
  EXPECT_EQ(rules[0]["flow"], nlohmann::json::parse(R"({
    "concurrency": {"limit": 2, "key": "tenant_id"},
    "dedupe": {"key": "order.id", "ttl": "1d", "ttl_ms": 86400000}})"));
  EXPECT_EQ(rules[1]["flow"]["singleton"]["key"], "account");
  EXPECT_EQ(rules[1]["flow"]["throttle"]["limit"], 3);
  EXPECT_EQ(rules[1]["flow"]["throttle"]["period_ms"], 60000);
  EXPECT_EQ(rules[2]["flow"]["debounce"]["max_wait_ms"], 120000);
}

TEST_F(AppCommand, InspectJsonWithoutFlowControlHasNullThrottleAndEmptyFlows) {
  const auto result = run({"app", "inspect", "good", "--json", "--apps", root()});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_TRUE(json["throttle"].is_null());
  EXPECT_EQ(json["rules"][0]["flow"], nlohmann::json::object());
}

TEST_F(AppCommand, InspectJsonCarriesDefaultsPatternsAndNextFireTimes) {
  const auto result = run({"app", "inspect", "users", "--json", "--apps", kExamples});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["name"], "users");
  EXPECT_EQ(json["runtime"], "python3");
  EXPECT_EQ(json["image"], "python:3.12-slim");
  EXPECT_EQ(json["network"], false);
  EXPECT_EQ(json["resources"]["memory"], "128MiB");
  EXPECT_EQ(json["resources"]["pids"], 128);
  EXPECT_EQ(json["rules"].size(), 2u);
  EXPECT_EQ(json["rules"][0]["pattern"],
            nlohmann::json::parse(R"({"event_name":["INSERT","UPDATE"],"table_name":["users"]})"));
  EXPECT_EQ(json["rules"][1]["timeout"], "30s");
  EXPECT_EQ(json["rules"][1]["retries"], 4);
  const auto& schedule = json["schedules"].at(0);
  EXPECT_EQ(schedule["name"], "nightly-digest");
  EXPECT_EQ(schedule["payload"], nlohmann::json::parse(R"({"kind":"nightly","top":10})"));
  ASSERT_EQ(schedule["next"].size(), 3u);
  // 03:00 in Berlin is 01:00 or 02:00 UTC depending on the season.
  const std::regex utc(R"(\d{4}-\d\d-\d\dT0[12]:00:00Z)");
  const std::regex local(R"(\d{4}-\d\d-\d\dT03:00:00\+0[12]:00)");
  std::optional<Instant> previous;
  for (const auto& fire : schedule["next"]) {
    const std::string at = fire["utc"];
    EXPECT_TRUE(std::regex_match(at, utc)) << at;
    EXPECT_TRUE(std::regex_match(fire["local"].get<std::string>(), local)) << fire["local"];
    const auto instant = parseRfc3339(at);
    ASSERT_TRUE(instant.has_value());
    if (previous) {
      EXPECT_GT(instant->seconds, previous->seconds);
    }
    previous = instant;
  }
}

// docs/replay.md "Archive": what the app's archive keeps, in words and in JSON.
TEST_F(AppCommand, InspectShowsTheArchive) {
  root_.write("kept/bin/h.sh", "#!/bin/sh\n", 0755);
  root_.write("kept/template.yaml", R"(runtime: exec
events:
  - handler: bin/h.sh
    pattern: {kind: [order]}
archive: {retention: 30d, pattern: {kind: [order, refund]}}
)");
  root_.write("rules/bin/h.sh", "#!/bin/sh\n", 0755);
  root_.write("rules/template.yaml", R"(runtime: exec
events:
  - handler: bin/h.sh
    pattern: {kind: [order]}
archive: {retention: 12h}
)");
  const auto text = run({"app", "inspect", "kept", "--apps", root(), "--runtime", "process"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("archive:      retention 30d, keeps events matching "
                          "{\"kind\": [\"order\", \"refund\"]}\n"),
            std::string::npos)
      << text.out;
  const auto json = run({"app", "inspect", "kept", "--json", "--apps", root()});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(nlohmann::json::parse(json.out)["archive"], nlohmann::json::parse(R"({
    "retention": "30d", "retention_ms": 2592000000, "pattern": {"kind": ["order", "refund"]}})"));
  const auto by_rules = run({"app", "inspect", "rules", "--apps", root(), "--runtime", "process"});
  EXPECT_NE(by_rules.out.find("archive:      retention 12h, keeps events a rule matches\n"),
            std::string::npos)
      << by_rules.out;
}

TEST_F(AppCommand, InspectOfAnUnknownAppFails) {
  const auto result = run({"app", "inspect", "nope", "--apps", root()});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err,
            "relay app inspect: no app named \"nope\" in " + root() + " (apps: bad, good)\n");
}

TEST_F(AppCommand, InspectOfADirectoryWithoutTemplateSaysWhy) {
  const auto result = run({"app", "inspect", "docs", "--apps", root()});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.err, "relay app inspect: " + root() + "/docs is not an app: no template.yaml\n");
}

TEST_F(AppCommand, InspectOfAnInvalidAppPrintsItsErrors) {
  const auto result = run({"app", "inspect", "bad", "--apps", root()});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.err,
            "relay app inspect: app \"bad\" has no valid template; nothing is "
            "loaded:\n" +
                root() +
                "/bad/template.yaml:2:14: concurrency: must be between 1 and 1024, "
                "got 0\n");
}

TEST_F(AppCommand, InspectNeedsAName) {
  EXPECT_EQ(run({"app", "inspect", "--apps", root()}).exit_code, 2);
}

TEST_F(AppCommand, AppNeedsASubcommand) { EXPECT_EQ(run({"app"}).exit_code, 2); }

// docs/operations.md "Logs": template text (an app author's) reaches the terminal escaped,
// like handler output, in every human form of the commands.
TEST_F(AppCommand, TemplateTextReachesTheTerminalEscaped) {
  relay::testing::TempDir hostile;
  hostile.write("evil/bin/h.sh", "#!/bin/sh\n", 0755);
  hostile.write("evil/template.yaml",
                "runtime: exec\nenv: {MODE: \"\\e[2J\\rwiped \\u202Egnp\"}\nevents:\n"
                "  - handler: bin/h.sh\n    pattern: {table_name: [\"\\e]0;title\\a\"]}\n"
                "schedules:\n  - name: nightly\n    cron: \"0 3 * * *\"\n    handler: bin/h.sh\n"
                "    payload: {note: \"\\x9b31m\"}\n");
  hostile.write("broken/template.yaml", "runtime: exec\n\"\\e[31mcolour\": 1\n");
  const std::string dir = hostile.path().string();
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"app", "inspect", "evil", "--apps", dir, "--runtime", "process"},
        std::vector<std::string>{"app", "ls", "--apps", dir, "--runtime", "process"},
        std::vector<std::string>{"validate", "--apps", dir}}) {
    const auto result = run(command);
    for (const std::string& text : {result.out, result.err}) {
      for (const char* raw : {"\x1b", "\r", "\x07", "\xc2\x9b", "\u202e"}) {
        EXPECT_EQ(text.find(raw), std::string::npos) << command[0] << " " << command[1] << ":\n"
                                                     << text;
      }
    }
  }
  const auto inspected = run({"app", "inspect", "evil", "--apps", dir, "--runtime", "process"});
  EXPECT_NE(inspected.out.find("MODE=\\x1B[2J\\x0Dwiped \\xE2\\x80\\xAEgnp"), std::string::npos)
      << inspected.out;
}

}  // namespace
}  // namespace relay::cli
