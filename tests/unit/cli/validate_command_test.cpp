#include <gtest/gtest.h>

#include "fakes/temp_dir.h"
#include "support/cli_run.h"

namespace relay::cli {
namespace {

using testing::run;
using testing::ScopedEnv;

const std::string kExampleApps = std::string(RELAY_SOURCE_DIR) + "/examples/apps";

// An apps root with a valid exec app `good` (one rule, one schedule).
class ValidateCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    root_.write("good/bin/h.sh", "#!/bin/sh\n", 0755);
    root_.write("good/template.yaml",
                "runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern: {a: [1]}\n"
                "schedules:\n  - {name: tick, cron: \"@hourly\", handler: bin/h.sh}\n");
  }
  std::string root() const { return root_.path().string(); }

  relay::testing::TempDir root_;
  ScopedEnv no_runtime_{"RELAY_RUNTIME", std::nullopt};
  ScopedEnv no_apps_{"RELAY_APPS", std::nullopt};
};

TEST_F(ValidateCommand, ExamplesAreValid) {
  const auto result = run({"validate", "--apps", kExampleApps});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "3 apps valid: audit, orders, users (6 rules, 1 schedule)\n");
  EXPECT_EQ(result.err, "");
}

TEST_F(ValidateCommand, ValidRootPrintsAOneLineSummary) {
  root_.write("second/bin/h.sh", "#!/bin/sh\n", 0755);
  root_.write("second/template.yaml",
              "runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern: {a: [1]}\n");
  const auto result = run({"validate", "--apps", root()});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "2 apps valid: good, second (2 rules, 1 schedule)\n");
}

TEST_F(ValidateCommand, EveryErrorOfEveryAppOnItsOwnLineAndExitTwo) {
  root_.write("bad/template.yaml", "runtime: exec\nconcurrency: 0\nnetwork: maybe\n");
  root_.write("worse/template.yaml", "runtime: [exec\n");
  const auto result = run({"validate", "--apps", root()});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.out, "");
  const std::string bad = root() + "/bad/template.yaml";
  const std::string worse = root() + "/worse/template.yaml";
  EXPECT_EQ(result.err, bad + ":2:14: concurrency: must be between 1 and 1024, got 0\n" + bad +
                            ":3:10: network: expected true or false, got the string \"maybe\"\n" +
                            worse +
                            ":2:1: YAML syntax error: end of sequence flow not found\n"
                            "relay validate: 3 errors in 2 of 3 apps\n");
}

TEST_F(ValidateCommand, AppDirectoryArgumentValidatesThatAppAlone) {
  const auto result = run({"validate", root() + "/good/"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "1 app valid: good (1 rule, 1 schedule)\n");
}

TEST_F(ValidateCommand, RootArgumentWithoutTemplateIsAnAppsRoot) {
  const auto result = run({"validate", root()});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "1 app valid: good (1 rule, 1 schedule)\n");
}

TEST_F(ValidateCommand, DirectoriesWithoutTemplateAreNoted) {
  root_.write("docs/README.md", "");
  const auto result = run({"validate", "--apps", root()});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.err, "note: " + root() + "/docs is not an app: no template.yaml\n");
}

TEST_F(ValidateCommand, RelayAppsEnvironmentIsTheDefaultAndTheFlagOverridesIt) {
  relay::testing::TempDir empty;
  {
    ScopedEnv apps("RELAY_APPS", root());
    const auto result = run({"validate"});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    EXPECT_EQ(result.out, "1 app valid: good (1 rule, 1 schedule)\n");
  }
  ScopedEnv apps("RELAY_APPS", root());
  const auto result = run({"validate", "--apps", empty.path().string()});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.out,
            "0 apps: no directory in " + empty.path().string() + " holds a template.yaml\n");
}

TEST_F(ValidateCommand, AnEmptyRelayAppsIsABadValueUnlessAFlagOrDirectoryIsGiven) {
  ScopedEnv apps("RELAY_APPS", "");
  const auto result = run({"validate"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.err, "relay validate: RELAY_APPS: expected a directory\n");
  EXPECT_EQ(run({"validate", "--apps", root()}).exit_code, 0);
  EXPECT_EQ(run({"validate", root() + "/good"}).exit_code, 0);
}

TEST_F(ValidateCommand, MissingRootIsAValidationError) {
  const auto result = run({"validate", "--apps", root() + "/nope"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.err, "relay validate: apps root " + root() + "/nope does not exist\n");
}

TEST_F(ValidateCommand, MissingAppDirIsAValidationError) {
  const auto result = run({"validate", root() + "/nope"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.err, "relay validate: " + root() + "/nope does not exist\n");
}

TEST_F(ValidateCommand, BothAppsAndAppDirIsAUsageError) {
  const auto result = run({"validate", "--apps", root(), root() + "/good"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.err, "relay validate: give either --apps DIR or APP_DIR, not both\n");
}

TEST_F(ValidateCommand, UnknownRuntimeFlagIsAUsageError) {
  const auto result = run({"validate", "--apps", root(), "--runtime", "vm"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.err, "relay validate: --runtime=\"vm\": expected sandbox, docker or process\n");
}

TEST_F(ValidateCommand, UnknownRuntimeVariableIsAUsageErrorNamingIt) {
  ScopedEnv runtime("RELAY_RUNTIME", "kvm");
  const auto result = run({"validate", "--apps", root()});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.err,
            "relay validate: RELAY_RUNTIME=\"kvm\": expected sandbox, docker or process\n");
  EXPECT_EQ(run({"validate", "--apps", root(), "--runtime", "process"}).exit_code, 0);
}

}  // namespace
}  // namespace relay::cli
