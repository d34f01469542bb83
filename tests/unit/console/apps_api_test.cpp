// The Apps page and the Pattern playground over a registry of real template files.
#include "console/apps_api.h"

#include <gtest/gtest.h>

#include "app/registry.h"
#include "fakes/temp_dir.h"

namespace relay::console {
namespace {

class AppsApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    apps_.write("shop/template.yaml", R"(runtime: exec
env:
  API_URL: https://api.example
  API_TOKEN: hunter2-secret
events:
  - handler: bin/pay.sh
    pattern: {kind: [order]}
  - handler: bin/big.sh
    pattern: {kind: [order], amount: [{gte: 100}]}
schedules:
  - name: nightly
    cron: "0 3 * * *"
    handler: bin/pay.sh
)");
    apps_.write("shop/bin/pay.sh", "#!/bin/sh\n", 0755);
    apps_.write("shop/bin/big.sh", "#!/bin/sh\n", 0755);
    apps_.write("broken/template.yaml", "runtime: cobol\n");
    auto registry = app::Registry::create({apps_.path(), {}});
    ASSERT_TRUE(registry.ok());
    registry_ = std::move(registry).value();
  }
  relay::testing::TempDir apps_;
  std::unique_ptr<app::Registry> registry_;
  const WallTime now_ = WallTime(std::chrono::seconds(1'790'000'000));
};

// Every viewer of the console may read /api/apps: an app's env may hold secrets, so its keys
// are shown and its values are not (docs/console.md "Security").
TEST_F(AppsApiTest, EnvValuesAreNotShownOnlyTheirKeys) {
  const Json json = appsJson(*registry_->snapshot(), now_);
  const Json& env = json["apps"][1]["detail"]["env"];
  ASSERT_TRUE(env.contains("API_TOKEN")) << env.dump();
  EXPECT_TRUE(env["API_TOKEN"].is_null());
  EXPECT_TRUE(env["API_URL"].is_null());
  EXPECT_EQ(json.dump().find("hunter2"), std::string::npos);
}

TEST_F(AppsApiTest, ListsEveryAppWithRulesSchedulesAndWhyNotAvailable) {
  const Json json = appsJson(*registry_->snapshot(), now_);
  ASSERT_EQ(json["apps"].size(), 2u);
  const Json& broken = json["apps"][0];
  EXPECT_EQ(broken["name"], "broken");
  EXPECT_EQ(broken["loaded"], false);
  EXPECT_FALSE(broken.contains("detail"));
  EXPECT_NE(broken["errors"][0].get<std::string>().find("template.yaml:1:"), std::string::npos);
  const Json& shop = json["apps"][1];
  EXPECT_EQ(shop["available"], true);
  EXPECT_EQ(shop["detail"]["rules"][1]["pattern"]["amount"][0]["gte"], 100);
  EXPECT_EQ(shop["detail"]["schedules"][0]["next"].size(), 3u);
  EXPECT_EQ(shop["detail"]["schedules"][0]["next"][0]["utc"], "2026-09-22T03:00:00Z");
}

TEST_F(AppsApiTest, ThePlaygroundListsEveryRuleAndTheMatchesInDispatchOrder) {
  const Json json =
      playgroundJson(*registry_->snapshot(), R"({"kind":"order","amount":150})", now_);
  EXPECT_EQ(json["valid"], true);
  ASSERT_EQ(json["matched"].size(), 2u);
  EXPECT_EQ(json["matched"][0]["handler"], "bin/pay.sh");
  EXPECT_EQ(json["matched"][1]["handler"], "bin/big.sh");
  const Json small = playgroundJson(*registry_->snapshot(), R"({"kind":"order","amount":5})", now_);
  ASSERT_EQ(small["rules"].size(), 2u);
  EXPECT_EQ(small["rules"][0]["matched"], true);
  EXPECT_EQ(small["rules"][1]["matched"], false);
}

TEST_F(AppsApiTest, ThePlaygroundExplainsAnInvalidEvent) {
  const Json json = playgroundJson(*registry_->snapshot(), R"({"kind": )", now_);
  EXPECT_EQ(json["valid"], false);
  EXPECT_NE(json["error"].get<std::string>().find("byte"), std::string::npos) << json.dump();
  EXPECT_TRUE(json["rules"].empty());
}

}  // namespace
}  // namespace relay::console
