// One fixture template per class of template error, each asserting the exact
// `file:LINE:COL: message` that `relay validate` prints.
#include <gtest/gtest.h>

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "app/app_loader.h"
#include "app_test_util.h"
#include "pattern/compiler.h"
#include "schedule/cron.h"
#include "schedule/time_zone.h"

namespace relay::app {
namespace {

using testing::AppsRoot;
using testing::at;
using testing::errorStrings;

class TemplateErrors : public ::testing::Test {
 protected:
  // Loads `yaml` as app "demo", next to an executable bin/h.sh, handlers/users.py and
  // handlers/orders.mjs.
  std::vector<std::string> errorsFor(const std::string& yaml) {
    root_.writeFile("demo", "bin/h.sh", "#!/bin/sh\n", 0755);
    root_.writeFile("demo", "handlers/users.py", "def on_insert(event):\n    pass\n");
    root_.writeFile("demo", "handlers/orders.mjs", "export function on(e) {}\n");
    root_.writeTemplate("demo", yaml);
    const LoadResult result = root_.load("demo");
    EXPECT_EQ(result.app == nullptr, !result.errors.empty());
    return errorStrings(result);
  }
  std::vector<std::string> expected(const std::vector<std::string>& located) {
    return at(root_.templatePath("demo"), located);
  }

  AppsRoot root_;
};

constexpr const char* kRule =
    "events:\n  - handler: bin/h.sh\n    pattern: {table_name: [users]}\n";

TEST_F(TemplateErrors, UnknownTopLevelKeySuggestsTheClosestKey) {
  EXPECT_EQ(errorsFor("runtime: exec\nconcurency: 4\n"),
            expected({"2:1: unknown key \"concurency\" (did you mean \"concurrency\"?)"}));
}

TEST_F(TemplateErrors, UnknownKeyListsTheAllowedKeysWhenNoneIsClose) {
  EXPECT_EQ(errorsFor(std::string("runtime: exec\n") + kRule + "    colour: red\n"),
            expected({"5:5: events[0]: unknown key \"colour\" (expected one of: handler, pattern, "
                      "timeout, retries, throttle, concurrency, dedupe, debounce, singleton, "
                      "deadline, start_timeout)"}));
}

TEST_F(TemplateErrors, MissingRuntimeIsReportedAtTheTop) {
  EXPECT_EQ(errorsFor(kRule), expected({"1:1: missing required key \"runtime\""}));
}

TEST_F(TemplateErrors, UnknownRuntimeNamesTheChoices) {
  EXPECT_EQ(errorsFor("runtime: ruby\n"),
            expected({"1:10: runtime: expected python3, node or exec, got \"ruby\""}));
}

TEST_F(TemplateErrors, QuotedIntegerIsAStringNotAnInteger) {
  EXPECT_EQ(errorsFor("runtime: exec\nconcurrency: \"4\"\n"),
            expected({"2:14: concurrency: expected an integer, got the string \"4\" (remove the "
                      "quotes)"}));
}

TEST_F(TemplateErrors, Yaml11BooleanSpellingIsAString) {
  EXPECT_EQ(errorsFor("runtime: exec\nnetwork: yes\n"),
            expected({"2:10: network: expected true or false, got the string \"yes\" (YAML 1.1 "
                      "spellings such as yes, no, on, off are strings here)"}));
}

TEST_F(TemplateErrors, EgressNeedsNetworkAndEntriesItCanEnforce) {
  EXPECT_EQ(errorsFor("runtime: exec\negress:\n  - to: 10.0.0.0/8\n"),
            expected({"3:3: egress: egress lists what a network: true handler may reach; "
                      "without network: true a handler has no network at all"}));
  EXPECT_EQ(errorsFor("runtime: exec\nnetwork: true\negress: []\n"),
            expected({"3:9: egress: expected at least one destination (to leave the handler no "
                      "network, remove network: true)"}));
  EXPECT_EQ(errorsFor("runtime: exec\nnetwork: true\negress:\n  - to: 10.0.0.1/8\n"),
            expected({"4:9: egress[0].to: \"10.0.0.1/8\" has bits set past its /8 prefix; "
                      "write 10.0.0.0/8"}));
  EXPECT_EQ(errorsFor("runtime: exec\nnetwork: true\negress:\n  - to: db.internal\n"),
            expected({"4:9: egress[0].to: expected an IPv4 or IPv6 address block such as "
                      "10.0.0.0/8 or 2001:db8::/32, got \"db.internal\""}));
  EXPECT_EQ(errorsFor("runtime: exec\nnetwork: true\negress:\n  - to: 10.0.0.0/8\n    ports: "
                      "[0, \"90-80\", 1.5]\n"),
            expected({"5:13: egress[0].ports[0]: expected a port (1-65535) or a range such as "
                      "\"8000-8080\", got \"0\"",
                      "5:16: egress[0].ports[1]: expected a port (1-65535) or a range such as "
                      "\"8000-8080\", got \"90-80\"",
                      "5:25: egress[0].ports[2]: expected a port (1-65535) or a range such as "
                      "\"8000-8080\", got the number 1.5"}));
  EXPECT_EQ(errorsFor("runtime: exec\nnetwork: true\negress:\n  - ports: [443]\n"),
            expected({"4:5: egress[0]: missing required key \"to\""}));
}

TEST_F(TemplateErrors, ConcurrencyOutOfRange) {
  EXPECT_EQ(errorsFor("runtime: exec\nconcurrency: 0\n"),
            expected({"2:14: concurrency: must be between 1 and 1024, got 0"}));
  EXPECT_EQ(errorsFor("runtime: exec\nconcurrency: 1025\n"),
            expected({"2:14: concurrency: must be between 1 and 1024, got 1025"}));
}

TEST_F(TemplateErrors, RetriesOutOfRange) {
  EXPECT_EQ(errorsFor(std::string("runtime: exec\n") + kRule + "    retries: 21\n"),
            expected({"5:14: events[0].retries: must be between 0 and 20, got 21"}));
}

TEST_F(TemplateErrors, DurationWithoutUnit) {
  EXPECT_EQ(errorsFor(std::string("runtime: exec\n") + kRule + "    timeout: 20\n"),
            expected({"5:14: events[0].timeout: invalid duration \"20\": missing unit after the "
                      "last number (expected e.g. 500ms, 90s, 1h30m, 7d)"}));
}

TEST_F(TemplateErrors, DurationWithASpace) {
  EXPECT_EQ(errorsFor(std::string("runtime: exec\n") + kRule + "    timeout: 5 m\n"),
            expected({"5:14: events[0].timeout: invalid duration \"5 m\": unexpected character "
                      "at position 2 (expected e.g. 500ms, 90s, 1h30m, 7d)"}));
}

TEST_F(TemplateErrors, NegativeDuration) {
  EXPECT_EQ(errorsFor(std::string("runtime: exec\n") + kRule + "    timeout: -1s\n"),
            expected({"5:14: events[0].timeout: invalid duration \"-1s\": no sign allowed "
                      "(expected e.g. 500ms, 90s, 1h30m, 7d)"}));
}

TEST_F(TemplateErrors, TimeoutOverTheFiveMinuteCap) {
  EXPECT_EQ(errorsFor(std::string("runtime: exec\n") + kRule + "    timeout: 5m1s\n"),
            expected({"5:14: events[0].timeout: must be at most 5m, got 5m1s"}));
}

TEST_F(TemplateErrors, ZeroTimeout) {
  EXPECT_EQ(errorsFor(std::string("runtime: exec\n") + kRule + "    timeout: 0s\n"),
            expected({"5:14: events[0].timeout: must be greater than 0"}));
}

TEST_F(TemplateErrors, BadMemoryUnit) {
  EXPECT_EQ(errorsFor("runtime: exec\nresources:\n  memory: 256MB\n"),
            expected({"3:11: resources.memory: invalid size \"256MB\": unknown unit \"MB\" "
                      "(expected bytes or a number with B, KiB, MiB, GiB, e.g. 256KiB)"}));
}

TEST_F(TemplateErrors, MemoryBelowTheMinimum) {
  EXPECT_EQ(errorsFor("runtime: exec\nresources:\n  memory: 1MiB\n"),
            expected({"3:11: resources.memory: must be between 4MiB and 256GiB, got 1MiB"}));
}

TEST_F(TemplateErrors, CpusOutOfRangeAndPidsZero) {
  EXPECT_EQ(errorsFor("runtime: exec\nresources:\n  cpus: 0\n  pids: 0\n"),
            expected({"3:9: resources.cpus: must be between 0.01 and 64, got 0",
                      "4:9: resources.pids: must be between 1 and 65536, got 0"}));
}

TEST_F(TemplateErrors, NonFiniteCpusSayWhyAndSignedNanIsAString) {
  EXPECT_EQ(errorsFor("runtime: exec\nresources:\n  cpus: .inf\n  pids: -.nan\n"),
            expected({"3:9: resources.cpus: number .inf is not finite; only finite numbers are "
                      "supported",
                      "4:9: resources.pids: expected an integer, got the string \"-.nan\""}));
}

TEST_F(TemplateErrors, EnvNamesAreCheckedAndRelayNamesReserved) {
  EXPECT_EQ(errorsFor("runtime: exec\nenv:\n  RELAY_APP: x\n  1BAD: y\n  EMPTY:\n  MAP: {a: 1}\n"),
            expected({"3:3: env: RELAY_APP is reserved: Relay sets the RELAY_* variables of every "
                      "handler itself",
                      "4:3: env: \"1BAD\" is not a valid environment variable name (expected "
                      "[A-Za-z_][A-Za-z0-9_]*)",
                      "5:3: env.EMPTY: expected a value (write \"\" for an empty string)",
                      "6:8: env.MAP: expected a string, number or boolean, got a map"}));
}

TEST_F(TemplateErrors, DuplicateHandler) {
  EXPECT_EQ(errorsFor(std::string("runtime: exec\n") + kRule +
                      "  - handler: bin/h.sh\n    pattern: {table_name: [orders]}\n"),
            expected({"5:14: events[1].handler: duplicate handler \"bin/h.sh\" (first at line 3); "
                      "handlers must be unique within an app"}));
}

TEST_F(TemplateErrors, DuplicateScheduleName) {
  EXPECT_EQ(errorsFor("runtime: exec\nschedules:\n"
                      "  - {name: nightly, cron: \"0 3 * * *\", handler: bin/h.sh}\n"
                      "  - {name: nightly, cron: \"0 4 * * *\", handler: bin/h.sh}\n"),
            expected({"4:12: schedules[1].name: duplicate schedule name \"nightly\" (first at line "
                      "3)"}));
}

TEST_F(TemplateErrors, ScheduleNameOutsideTheCharset) {
  EXPECT_EQ(errorsFor("runtime: exec\nschedules:\n"
                      "  - {name: Nightly, cron: \"@daily\", handler: bin/h.sh}\n"),
            expected({"3:12: schedules[0].name: \"Nightly\" is not a valid schedule name "
                      "(expected [a-z0-9][a-z0-9_-]{0,62})"}));
}

TEST_F(TemplateErrors, InvalidCron) {
  const auto cron_error = schedule::CronExpression::parse("61 * * * *");
  ASSERT_FALSE(cron_error.ok());
  EXPECT_EQ(errorsFor("runtime: exec\nschedules:\n"
                      "  - name: nightly\n    cron: \"61 * * * *\"\n    handler: bin/h.sh\n"),
            expected({"4:11: schedules[0].cron: " + cron_error.error().message}));
}

TEST_F(TemplateErrors, UnknownTimezone) {
  const auto zone_error = schedule::TimeZone::load("Mars/Olympus");
  ASSERT_FALSE(zone_error.ok());
  EXPECT_EQ(errorsFor("runtime: exec\nschedules:\n  - name: nightly\n    cron: \"@daily\"\n"
                      "    timezone: Mars/Olympus\n    handler: bin/h.sh\n"),
            expected({"5:15: schedules[0].timezone: " + zone_error.error().message}));
}

TEST_F(TemplateErrors, PayloadMustBeAMap) {
  EXPECT_EQ(errorsFor("runtime: exec\nschedules:\n  - name: nightly\n    cron: \"@daily\"\n"
                      "    handler: bin/h.sh\n    payload: [1, 2]\n"),
            expected({"6:14: schedules[0].payload: expected a map (it becomes a JSON object), got "
                      "a list"}));
}

TEST_F(TemplateErrors, PayloadValueJsonCannotHold) {
  EXPECT_EQ(errorsFor("runtime: exec\nschedules:\n  - name: nightly\n    cron: \"@daily\"\n"
                      "    handler: bin/h.sh\n    payload: {limit: .inf}\n"),
            expected({"6:22: schedules[0].payload.limit: .inf cannot be represented in JSON"}));
}

TEST_F(TemplateErrors, MissingExecHandlerFile) {
  EXPECT_EQ(errorsFor("runtime: exec\nevents:\n  - handler: bin/missing.sh\n"
                      "    pattern: {table_name: [users]}\n"),
            expected({"3:14: events[0].handler: bin/missing.sh does not exist in the app "
                      "directory"}));
}

TEST_F(TemplateErrors, ExecHandlerNotExecutable) {
  root_.writeFile("demo", "bin/plain.sh", "#!/bin/sh\n", 0644);
  EXPECT_EQ(errorsFor("runtime: exec\nevents:\n  - handler: bin/plain.sh\n"
                      "    pattern: {table_name: [users]}\n"),
            expected({"3:14: events[0].handler: bin/plain.sh is not executable (chmod +x "
                      "bin/plain.sh)"}));
}

TEST_F(TemplateErrors, ExecHandlerOutsideTheAppDirectory) {
  EXPECT_EQ(errorsFor("runtime: exec\nevents:\n  - handler: ../other/bin/h.sh\n"
                      "    pattern: {table_name: [users]}\n"
                      "  - handler: /bin/sh\n    pattern: {table_name: [orders]}\n"),
            expected({"3:14: events[0].handler: expected a plain relative path inside the app "
                      "directory (no empty, \".\" or \"..\" parts), got \"../other/bin/h.sh\"",
                      "5:14: events[1].handler: expected a path relative to the app directory "
                      "(e.g. bin/handler.sh), got the absolute path \"/bin/sh\""}));
}

TEST_F(TemplateErrors, MissingPythonModule) {
  EXPECT_EQ(errorsFor("runtime: python3\nevents:\n  - handler: handlers.payments.on_insert\n"
                      "    pattern: {table_name: [payments]}\n"),
            expected({"3:14: events[0].handler: \"handlers.payments.on_insert\" needs "
                      "handlers/payments.py, which does not exist in the app directory"}));
}

TEST_F(TemplateErrors, MissingNodeModuleListsEveryCandidate) {
  EXPECT_EQ(errorsFor("runtime: node\nevents:\n  - handler: handlers.refunds.on\n"
                      "    pattern: {table_name: [refunds]}\n"),
            expected({"3:14: events[0].handler: \"handlers.refunds.on\" needs one of "
                      "handlers/refunds.mjs, handlers/refunds/index.mjs, handlers/refunds.js, "
                      "handlers/refunds/index.js, handlers/refunds.cjs; none exists in the app "
                      "directory"}));
}

TEST_F(TemplateErrors, PythonHandlerWithoutAFunction) {
  EXPECT_EQ(errorsFor("runtime: python3\nevents:\n  - handler: on_insert\n"
                      "    pattern: {table_name: [users]}\n"),
            expected({"3:14: events[0].handler: expected module.function for runtime python3 "
                      "(dot-separated identifiers, e.g. handlers.users.on_insert), got "
                      "\"on_insert\""}));
}

TEST_F(TemplateErrors, YamlSyntaxError) {
  EXPECT_EQ(errorsFor("runtime: exec\nevents: [1, 2\n"),
            expected({"3:1: YAML syntax error: end of sequence flow not found"}));
}

TEST_F(TemplateErrors, TemplateThatIsNotAMap) {
  EXPECT_EQ(errorsFor("- runtime: exec\n"),
            expected({"1:1: template must be a map of keys (runtime, events, ...), got a list"}));
}

TEST_F(TemplateErrors, EmptyFile) {
  EXPECT_EQ(errorsFor(""),
            expected({"1:1: template is empty; expected a map with at least \"runtime\""}));
  EXPECT_EQ(errorsFor("# nothing yet\n"),
            expected({"1:1: template is empty; expected a map with at least \"runtime\""}));
}

TEST_F(TemplateErrors, SecondYamlDocument) {
  EXPECT_EQ(errorsFor("runtime: exec\n---\nruntime: node\n"),
            expected({"3:1: template must be a single YAML document; found a second one after "
                      "\"---\""}));
}

TEST_F(TemplateErrors, DuplicateYamlKeys) {
  EXPECT_EQ(errorsFor(std::string("runtime: exec\n") + kRule + "    handler: bin/h.sh\n" +
                      "runtime: node\n"),
            expected({"5:5: events[0]: duplicate key \"handler\" (first at line 3)",
                      "6:1: duplicate key \"runtime\" (first at line 1)"}));
}

TEST_F(TemplateErrors, WrongShapesForLists) {
  EXPECT_EQ(errorsFor("runtime: exec\nevents: {handler: bin/h.sh}\nschedules:\n  - nightly\n"),
            expected({"2:9: events: expected a list of rules, got a map",
                      "4:5: schedules[0]: expected a map with name, cron and handler, got the "
                      "string \"nightly\""}));
}

TEST_F(TemplateErrors, MissingRuleKeys) {
  EXPECT_EQ(errorsFor("runtime: exec\nevents:\n  - timeout: 10s\n"),
            expected({"3:5: events[0]: missing required key \"handler\"",
                      "3:5: events[0]: missing required key \"pattern\""}));
}

TEST_F(TemplateErrors, NullPattern) {
  EXPECT_EQ(errorsFor("runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern:\n"),
            expected({"4:5: events[0].pattern: expected a map of field conditions (e.g. "
                      "{table_name: [users]}), got no value (null)"}));
}

TEST_F(TemplateErrors, PatternErrorsCarryTheRulePathAndPosition) {
  const std::string yaml =
      "runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern:\n      status: COMPLETED\n"
      "      id: [{prefx: user_}]\n";
  // The compiler's own messages, reported at its positions under the rule's path.
  const YAML::Node pattern = YAML::Load(yaml)["events"][0]["pattern"];
  const auto compiled = pattern::compile(pattern);
  const auto* problems = std::get_if<std::vector<pattern::CompileError>>(&compiled);
  ASSERT_NE(problems, nullptr);
  ASSERT_EQ(problems->size(), 2u);
  std::vector<std::string> located;
  for (const pattern::CompileError& problem : *problems) {
    EXPECT_GE(problem.line, 5);
    located.push_back(std::to_string(problem.line) + ":" + std::to_string(problem.column) +
                      ": events[0].pattern." + problem.path + ": " + problem.message);
  }
  EXPECT_EQ(errorsFor(yaml), expected(located));
}

TEST_F(TemplateErrors, SymlinkedTemplateEscapingTheAppDirectory) {
  root_.writeFile("elsewhere", "template.yaml", "runtime: exec\n");
  root_.writeFile("demo", "bin/h.sh", "#!/bin/sh\n", 0755);
  std::filesystem::create_symlink("../elsewhere/template.yaml", root_.templatePath("demo"));
  const std::string outside =
      std::filesystem::canonical(root_.appDir("elsewhere") / "template.yaml").string();
  EXPECT_EQ(errorStrings(root_.load("demo")), expected({"1:1: template.yaml is a symlink to " +
                                                        outside + ", outside the app directory"}));
}

TEST_F(TemplateErrors, SymlinkedTemplateInsideTheAppDirectoryIsFine) {
  root_.writeFile("demo", "bin/h.sh", "#!/bin/sh\n", 0755);
  root_.writeFile("demo", "config/template.yaml", std::string("runtime: exec\n") + kRule);
  std::filesystem::create_symlink("config/template.yaml", root_.templatePath("demo"));
  const LoadResult result = root_.load("demo");
  EXPECT_TRUE(result.ok()) << ::testing::PrintToString(errorStrings(result));
}

TEST_F(TemplateErrors, DanglingTemplateSymlink) {
  std::filesystem::create_directories(root_.appDir("demo"));
  std::filesystem::create_symlink("gone.yaml", root_.templatePath("demo"));
  EXPECT_EQ(errorStrings(root_.load("demo")),
            expected({"1:1: template.yaml is a symlink to gone.yaml, which does not exist"}));
}

TEST_F(TemplateErrors, InvalidAppNameIsReportedWithTheOtherErrors) {
  root_.writeTemplate("Billing_App", "runtime: cobol\n");
  EXPECT_EQ(errorStrings(root_.load("Billing_App")),
            at(root_.templatePath("Billing_App"),
               {"1:1: app name \"Billing_App\" (the directory name) must match "
                "[a-z0-9][a-z0-9_-]{0,62}",
                "1:10: runtime: expected python3, node or exec, got \"cobol\""}));
}

TEST_F(TemplateErrors, TemplateThatIsADirectory) {
  std::filesystem::create_directories(root_.templatePath("demo"));
  EXPECT_EQ(errorStrings(root_.load("demo")),
            expected({"1:1: template.yaml is a directory, not a file"}));
}

TEST_F(TemplateErrors, OversizedTemplate) {
  EXPECT_EQ(errorsFor("runtime: exec\n# " + std::string(kMaxTemplateBytes, 'x') + "\n"),
            expected({"1:1: template.yaml is larger than 1024 KiB; a template that big is not a "
                      "template"}));
}

TEST_F(TemplateErrors, DeeplyNestedYamlIsAnErrorNotACrash) {
  const std::string deep = std::string(5000, '[') + std::string(5000, ']');
  const std::vector<std::string> errors = errorsFor("runtime: exec\nenv: " + deep + "\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find(": YAML syntax error: "), std::string::npos) << errors[0];
}

TEST_F(TemplateErrors, AliasBombIsRefused) {
  std::string yaml = "runtime: exec\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 8; ++i) {
    const std::string previous = "*a" + std::to_string(i - 1);
    yaml += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + previous + ", " +
            previous + ", " + previous + ", " + previous + ", " + previous + ", " + previous +
            ", " + previous + ", " + previous + ", " + previous + ", " + previous + "]\n";
  }
  EXPECT_EQ(errorsFor(yaml), expected({"1:1: template expands to more than 100000 YAML nodes "
                                       "(aliases?); refusing to read it"}));
}

TEST_F(TemplateErrors, TypeErrorsSuggestQuotingStrings) {
  EXPECT_EQ(errorsFor("runtime: exec\nimage: 3.12\n"),
            expected({"2:8: image: expected a string, got the number 3.12 (quote it if you mean "
                      "the text: \"3.12\")"}));
}

TEST_F(TemplateErrors, MultiErrorTemplateReportsEveryProblemInOrder) {
  const std::string yaml =
      "runtime: exec\n"                        // 1
      "concurrency: 0\n"                       // 2
      "network: \"false\"\n"                   // 3
      "resources: {memory: 1GB, cpus: 65}\n"   // 4
      "events:\n"                              // 5
      "  - handler: bin/h.sh\n"                // 6
      "    pattern: {table_name: [users]}\n"   // 7
      "    timeout: 20\n"                      // 8
      "    retries: -1\n"                      // 9
      "  - handler: bin/nope.sh\n"             // 10
      "    pattern: {table_name: [orders]}\n"  // 11
      "schedules:\n"                           // 12
      "  - name: report\n"                     // 13
      "    cron: \"0 3 * * *\"\n"              // 14
      "    timezone: UTC\n"                    // 15
      "    handler: bin/h.sh\n"                // 16
      "    extra: 1\n";                        // 17
  EXPECT_EQ(errorsFor(yaml),
            expected({"2:14: concurrency: must be between 1 and 1024, got 0",
                      "3:10: network: expected true or false, got the string \"false\" (remove "
                      "the quotes)",
                      "4:21: resources.memory: invalid size \"1GB\": unknown unit \"GB\" "
                      "(expected bytes or a number with B, KiB, MiB, GiB, e.g. 256KiB)",
                      "4:32: resources.cpus: must be between 0.01 and 64, got 65",
                      "8:14: events[0].timeout: invalid duration \"20\": missing unit after the "
                      "last number (expected e.g. 500ms, 90s, 1h30m, 7d)",
                      "9:14: events[0].retries: must be between 0 and 20, got -1",
                      "10:14: events[1].handler: bin/nope.sh does not exist in the app directory",
                      "17:5: schedules[0]: unknown key \"extra\" (expected one of: name, cron, "
                      "timezone, handler, timeout, retries, payload, deadline, start_timeout)"}));
}

}  // namespace
}  // namespace relay::app
