// What the RegistryCatalog plans for a matched event: each rule's attempt budget is its
// template's `retries` plus one, and a rule that says nothing gets the default (four retries,
// five attempts).
#include "catalog/registry_catalog.h"

#include <gtest/gtest.h>

#include "app/registry.h"
#include "common/system_clock.h"
#include "unit/app/app_test_util.h"

namespace relay::catalog {
namespace {

TEST(RegistryCatalog, PlansEachRuleWithItsRetriesPlusOneAndFiveAttemptsByDefault) {
  app::testing::AppsRoot root;
  root.writeExecApp("plain");  // no `retries:`
  root.writeFile("picky", "bin/h.sh", "#!/bin/sh\n", 0755);
  root.writeTemplate("picky",
                     "runtime: exec\nevents:\n  - handler: bin/h.sh\n    retries: 1\n"
                     "    pattern: {table_name: [users]}\n");
  auto registry = app::Registry::create({root.path(), {}, {}});
  ASSERT_TRUE(registry.ok()) << registry.error().message;
  RegistryCatalog catalog(**registry, 1024);
  invocation::Message message;
  message.id = "1-0";
  message.fields = {{"event", R"({"table_name":"users"})"}};
  const SystemClock clock;
  const invocation::Classification classification = catalog.classify(message, clock.now());
  ASSERT_EQ(classification.kind, invocation::Classification::Kind::kPlan);
  ASSERT_EQ(classification.plan.invocations.size(), 2u);
  EXPECT_EQ(classification.plan.invocations[0].app, "picky");
  EXPECT_EQ(classification.plan.invocations[0].max_attempts, 2);
  EXPECT_EQ(classification.plan.invocations[1].app, "plain");
  EXPECT_EQ(classification.plan.invocations[1].max_attempts, 5);
}

}  // namespace
}  // namespace relay::catalog
