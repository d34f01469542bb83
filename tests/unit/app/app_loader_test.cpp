#include "app/app_loader.h"

#include <gtest/gtest.h>

#include "app_test_util.h"
#include "pattern/pattern.h"

namespace relay::app {
namespace {

using testing::AppsRoot;
using testing::errorStrings;

TEST(AppLoader, FillsInEveryDefault) {
  AppsRoot root;
  root.writeExecApp("audit");
  root.writeTemplate("audit",
                     "runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern: {a: [1]}\n");
  const LoadResult result = root.load("audit");
  ASSERT_TRUE(result.ok()) << ::testing::PrintToString(errorStrings(result));
  const App& app = *result.app;
  EXPECT_EQ(app.name, "audit");
  EXPECT_EQ(app.dir, root.appDir("audit"));
  EXPECT_EQ(app.runtime, runtime::Language::kExec);
  EXPECT_EQ(app.image, "debian:12-slim");
  EXPECT_FALSE(app.image_named);  // docker's default; the sandbox keeps the host's root
  EXPECT_EQ(app.concurrency, 4);
  EXPECT_FALSE(app.network);
  EXPECT_TRUE(app.env.empty());
  EXPECT_EQ(app.resources.memory_bytes, 256u << 20);
  EXPECT_EQ(app.resources.cpus, 1.0);
  EXPECT_EQ(app.resources.pids, 128);
  ASSERT_EQ(app.rules.size(), 1u);
  EXPECT_EQ(app.rules[0].handler, "bin/h.sh");
  EXPECT_EQ(app.rules[0].timeout, std::chrono::seconds(30));
  EXPECT_EQ(app.rules[0].retries, 4);
  EXPECT_EQ(app.rules[0].line, 3);
  ASSERT_NE(app.rules[0].pattern, nullptr);
  EXPECT_TRUE(app.schedules.empty());
  EXPECT_EQ(result.runtime, runtime::Language::kExec);
}

TEST(AppLoader, KeepsEveryExplicitValue) {
  AppsRoot root;
  root.writeFile("users", "handlers/users.py", "def on_insert(event):\n    print(event)\n");
  root.writeFile("users", "jobs/report.py", "def run(event):\n    pass\n");
  root.writeTemplate("users", R"(runtime: python3
image: python:3.11-alpine
concurrency: 16
network: true
egress:
  - to: 203.0.113.0/24
    ports: [443, "8000-8080"]
  - to: 2001:db8::1
env:
  LOG_LEVEL: debug
  PORT: 8080
  VERBOSE: true
resources:
  memory: 512MiB
  cpus: 0.5
  pids: 64
events:
  - handler: handlers.users.on_insert
    pattern: {event_name: [INSERT], table_name: [users], id: ["1"]}
    timeout: 1m30s
    retries: 0
schedules:
  - name: nightly-report
    cron: "0 3 * * *"
    timezone: Europe/Berlin
    handler: jobs.report.run
    timeout: 5m
    retries: 20
    payload: {kind: nightly, limit: 10, dry_run: false, tag: "10", nested: {a: [1, x]}}
)");
  const LoadResult result = root.load("users");
  ASSERT_TRUE(result.ok()) << ::testing::PrintToString(errorStrings(result));
  const App& app = *result.app;
  EXPECT_EQ(app.runtime, runtime::Language::kPython3);
  EXPECT_EQ(app.image, "python:3.11-alpine");
  EXPECT_TRUE(app.image_named);
  EXPECT_EQ(app.concurrency, 16);
  EXPECT_TRUE(app.network);
  ASSERT_EQ(app.egress.size(), 2u);
  EXPECT_EQ(app.egress[0].to.text(), "203.0.113.0/24");
  EXPECT_EQ(app.egress[0].ports, (std::vector<runtime::PortRange>{{443, 443}, {8000, 8080}}));
  EXPECT_EQ(app.egress[1].to.text(), "2001:db8::1/128");
  EXPECT_TRUE(app.egress[1].ports.empty());
  const std::vector<std::pair<std::string, std::string>> env = {
      {"LOG_LEVEL", "debug"}, {"PORT", "8080"}, {"VERBOSE", "true"}};
  EXPECT_EQ(app.env, env);
  EXPECT_EQ(app.resources.memory_bytes, 512u << 20);
  EXPECT_EQ(app.resources.cpus, 0.5);
  EXPECT_EQ(app.resources.pids, 64);
  ASSERT_EQ(app.rules.size(), 1u);
  EXPECT_EQ(app.rules[0].timeout, std::chrono::seconds(90));
  EXPECT_EQ(app.rules[0].retries, 0);
  // YAML typing survives into the display form: the quoted "1" stays a string.
  EXPECT_EQ(app.rules[0].pattern_json,
            R"({"event_name":["INSERT"],"table_name":["users"],"id":["1"]})");
  ASSERT_EQ(app.schedules.size(), 1u);
  const Schedule& schedule = app.schedules[0];
  EXPECT_EQ(schedule.name, "nightly-report");
  EXPECT_EQ(schedule.cron_text, "0 3 * * *");
  EXPECT_EQ(schedule.time_zone.name(), "Europe/Berlin");
  EXPECT_EQ(schedule.handler, "jobs.report.run");
  EXPECT_EQ(schedule.timeout, std::chrono::minutes(5));
  EXPECT_EQ(schedule.retries, 20);
  EXPECT_EQ(schedule.payload_json,
            R"({"kind":"nightly","limit":10,"dry_run":false,"tag":"10","nested":{"a":[1,"x"]}})");
  EXPECT_EQ(schedule.line, 23);
}

TEST(AppLoader, ScheduleDefaultsToUtcAndAnEmptyPayload) {
  AppsRoot root;
  root.writeExecApp("cron");
  root.writeTemplate("cron",
                     "runtime: exec\nschedules:\n  - {name: tick, cron: \"@hourly\", handler: "
                     "bin/h.sh}\n");
  const LoadResult result = root.load("cron");
  ASSERT_TRUE(result.ok()) << ::testing::PrintToString(errorStrings(result));
  const Schedule& schedule = result.app->schedules.at(0);
  EXPECT_EQ(schedule.time_zone.name(), "UTC");
  EXPECT_EQ(schedule.payload_json, "{}");
  EXPECT_EQ(schedule.timeout, std::chrono::seconds(30));
  EXPECT_EQ(schedule.retries, 4);
  EXPECT_TRUE(result.app->rules.empty());
}

TEST(AppLoader, NodeRuntimeDefaultsItsImage) {
  AppsRoot root;
  root.writeFile("orders", "handlers/orders/index.js", "exports.on = () => {};\n");
  root.writeTemplate("orders",
                     "runtime: node\nevents:\n  - handler: handlers.orders.on\n"
                     "    pattern: {table_name: [orders]}\n");
  const LoadResult result = root.load("orders");
  ASSERT_TRUE(result.ok()) << ::testing::PrintToString(errorStrings(result));
  EXPECT_EQ(result.app->image, "node:20-slim");
}

TEST(AppLoader, ReportsTheDeclaredRuntimeOfAnInvalidTemplate) {
  AppsRoot root;
  root.writeTemplate("broken", "runtime: node\nconcurrency: -1\n");
  const LoadResult result = root.load("broken");
  EXPECT_FALSE(result.ok());
  EXPECT_EQ(result.runtime, runtime::Language::kNode);
  EXPECT_EQ(result.errors.size(), 1u);
}

TEST(AppLoader, HexAndOctalIntegersAreIntegers) {
  AppsRoot root;
  root.writeExecApp("hex");
  root.writeTemplate("hex", "runtime: exec\nconcurrency: 0x10\nresources: {pids: 0o20}\n");
  const LoadResult result = root.load("hex");
  ASSERT_TRUE(result.ok()) << ::testing::PrintToString(errorStrings(result));
  EXPECT_EQ(result.app->concurrency, 16);
  EXPECT_EQ(result.app->resources.pids, 16);
}

}  // namespace
}  // namespace relay::app
