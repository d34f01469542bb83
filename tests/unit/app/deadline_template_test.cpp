// Deadlines in template.yaml (docs/apps.md "Deadlines"): `deadline` and `start_timeout` of a rule
// or a schedule, their errors as `relay validate` prints them, and what the valid forms give.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "app/app_loader.h"
#include "app_test_util.h"

namespace relay::app {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using testing::AppsRoot;
using testing::at;
using testing::errorStrings;

class DeadlineTemplate : public ::testing::Test {
 protected:
  LoadResult load(const std::string& rule, const std::string& schedule = "") {
    root_.writeFile("demo", "bin/h.sh", "#!/bin/sh\n", 0755);
    root_.writeTemplate("demo",
                        "runtime: exec\nevents:\n  - handler: bin/h.sh\n"
                        "    pattern: {table_name: [users]}\n" +
                            rule +
                            (schedule.empty() ? ""
                                              : "schedules:\n  - name: nightly\n"
                                                "    cron: \"0 3 * * *\"\n"
                                                "    handler: bin/h.sh\n" +
                                                    schedule));
    return root_.load("demo");
  }
  std::vector<std::string> expected(const std::vector<std::string>& located) {
    return at(root_.templatePath("demo"), located);
  }

  AppsRoot root_;
};

TEST_F(DeadlineTemplate, ARuleAndAScheduleKeepTheirDeadlineAndStartTimeout) {
  const LoadResult result = load("    deadline: 1h\n    start_timeout: 5m\n",
                                 "    deadline: 30m\n    start_timeout: 30m\n");
  ASSERT_TRUE(result.errors.empty()) << errorStrings(result).front();
  EXPECT_EQ(result.app->rules.at(0).deadline, hours(1));
  EXPECT_EQ(result.app->rules.at(0).start_timeout, minutes(5));
  EXPECT_EQ(result.app->schedules.at(0).deadline, minutes(30));
  EXPECT_EQ(result.app->schedules.at(0).start_timeout, minutes(30));
}

TEST_F(DeadlineTemplate, NoneIsTheDefault) {
  const LoadResult result = load("");
  ASSERT_TRUE(result.errors.empty()) << errorStrings(result).front();
  EXPECT_EQ(result.app->rules.at(0).deadline.count(), 0);
  EXPECT_EQ(result.app->rules.at(0).start_timeout.count(), 0);
}

TEST_F(DeadlineTemplate, AStartTimeoutLongerThanTheDeadlineIsRefusedWhereItIsWritten) {
  EXPECT_EQ(errorStrings(load("    deadline: 10m\n    start_timeout: 1h\n")),
            expected({"6:20: events[0].start_timeout: start_timeout 1h is longer than the "
                      "deadline 10m (no attempt starts after the deadline)"}));
}

TEST_F(DeadlineTemplate, ABadDurationNamesTheKeyAndWhatWasExpected) {
  const std::vector<std::string> errors = errorStrings(load("    deadline: soon\n"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find(":5:15: events[0].deadline:"), std::string::npos) << errors[0];
  const std::vector<std::string> too_long = errorStrings(load("    start_timeout: 400d\n"));
  ASSERT_EQ(too_long.size(), 1u);
  EXPECT_NE(too_long[0].find(":5:20: events[0].start_timeout:"), std::string::npos) << too_long[0];
  const std::vector<std::string> schedule = errorStrings(load("", "    deadline: -1h\n"));
  ASSERT_EQ(schedule.size(), 1u);
  EXPECT_NE(schedule[0].find("schedules[0].deadline:"), std::string::npos) << schedule[0];
}

}  // namespace
}  // namespace relay::app
