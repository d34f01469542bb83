#include "app/registry.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <optional>
#include <thread>

#include "app_test_util.h"

namespace relay::app {
namespace {

using testing::AppsRoot;

std::unique_ptr<Registry> makeRegistry(const AppsRoot& root, AvailabilityCheck check = {}) {
  auto registry = Registry::create({root.path(), std::move(check)});
  EXPECT_TRUE(registry.ok()) << registry.error().message;
  return std::move(registry).value();
}

std::vector<std::string> names(const Snapshot& snapshot) {
  std::vector<std::string> out;
  for (const AppEntry& entry : snapshot.apps()) out.push_back(entry.name);
  return out;
}

TEST(Registry, LoadsEveryAppSortedByName) {
  AppsRoot root;
  root.writeExecApp("orders");
  root.writeExecApp("audit");
  root.writeTemplate("broken", "runtime: exec\nconcurrency: 0\n");
  const auto registry = makeRegistry(root);
  const auto snapshot = registry->snapshot();
  EXPECT_EQ(names(*snapshot), (std::vector<std::string>{"audit", "broken", "orders"}));
  const AppEntry* audit = snapshot->find("audit");
  ASSERT_NE(audit, nullptr);
  EXPECT_TRUE(audit->status.loaded);
  EXPECT_TRUE(audit->status.available);
  EXPECT_EQ(audit->status.reason, "");
  EXPECT_EQ(snapshot->loadedApps().size(), 2u);
  EXPECT_EQ(snapshot->find("nope"), nullptr);
}

TEST(Registry, NeverValidAppIsNeitherLoadedNorAvailable) {
  AppsRoot root;
  root.writeTemplate("broken", "runtime: exec\nconcurrency: 0\nnetwork: 1\n");
  const auto registry = makeRegistry(root);
  const AppEntry* broken = registry->snapshot()->find("broken");
  ASSERT_NE(broken, nullptr);
  EXPECT_FALSE(broken->status.loaded);
  EXPECT_FALSE(broken->status.available);
  EXPECT_EQ(broken->app, nullptr);
  EXPECT_EQ(broken->runtime, runtime::Language::kExec);
  EXPECT_EQ(broken->errors.size(), 2u);
  EXPECT_EQ(broken->status.reason,
            "invalid template.yaml:2:14: concurrency: must be between 1 and 1024, got 0 (+1 more "
            "error)");
}

TEST(Registry, ChangedTemplateIsReloaded) {
  AppsRoot root;
  root.writeExecApp("audit", 4);
  const auto registry = makeRegistry(root);
  const auto before = registry->snapshot();
  root.writeExecApp("audit", 8);
  const ReloadReport report = registry->reload({"audit"});
  EXPECT_EQ(report.updated, (std::vector<std::string>{"audit"}));
  const auto after = registry->snapshot();
  EXPECT_EQ(after->find("audit")->app->concurrency, 8);
  EXPECT_GT(after->generation(), before->generation());
  // A reader still holding the old snapshot sees the old app, untouched.
  EXPECT_EQ(before->find("audit")->app->concurrency, 4);
}

TEST(Registry, BrokenTemplateKeepsTheLastValidRulesButIsUnavailable) {
  AppsRoot root;
  root.writeExecApp("audit", 6);
  const auto registry = makeRegistry(root);
  root.writeTemplate("audit", "runtime: exec\nconcurrency: many\n");
  const ReloadReport report = registry->reload({"audit"});
  EXPECT_EQ(report.invalid, (std::vector<std::string>{"audit"}));
  const AppEntry* audit = registry->snapshot()->find("audit");
  ASSERT_NE(audit->app, nullptr);
  EXPECT_EQ(audit->app->concurrency, 6);
  EXPECT_EQ(audit->app->rules.size(), 1u);
  EXPECT_TRUE(audit->status.loaded);
  EXPECT_FALSE(audit->status.available);
  EXPECT_EQ(audit->status.reason,
            "invalid template.yaml:2:14: concurrency: expected an integer, got the string "
            "\"many\"; keeping the last valid rules");
  EXPECT_EQ(registry->snapshot()->loadedApps().size(), 1u);
}

TEST(Registry, FixedTemplateBecomesAvailableAgain) {
  AppsRoot root;
  root.writeExecApp("audit", 6);
  const auto registry = makeRegistry(root);
  root.writeTemplate("audit", "runtime: exec\nconcurrency: many\n");
  (void)registry->reload({"audit"});
  root.writeExecApp("audit", 7);
  const ReloadReport report = registry->reload({"audit"});
  EXPECT_EQ(report.updated, (std::vector<std::string>{"audit"}));
  const AppEntry* audit = registry->snapshot()->find("audit");
  EXPECT_TRUE(audit->status.available);
  EXPECT_TRUE(audit->errors.empty());
  EXPECT_EQ(audit->app->concurrency, 7);
}

TEST(Registry, NewDirectoryIsAdded) {
  AppsRoot root;
  root.writeExecApp("audit");
  const auto registry = makeRegistry(root);
  root.writeExecApp("billing");
  const ReloadReport report = registry->reload({"billing"});
  EXPECT_EQ(report.added, (std::vector<std::string>{"billing"}));
  EXPECT_EQ(names(*registry->snapshot()), (std::vector<std::string>{"audit", "billing"}));
}

TEST(Registry, RemovedDirectoryIsRemoved) {
  AppsRoot root;
  root.writeExecApp("audit");
  root.writeExecApp("billing");
  const auto registry = makeRegistry(root);
  std::filesystem::remove_all(root.appDir("billing"));
  const ReloadReport report = registry->reload({"billing"});
  EXPECT_EQ(report.removed, (std::vector<std::string>{"billing"}));
  EXPECT_EQ(names(*registry->snapshot()), (std::vector<std::string>{"audit"}));
}

TEST(Registry, RemovedTemplateTurnsTheAppIntoAnIgnoredDirectory) {
  AppsRoot root;
  root.writeExecApp("audit");
  const auto registry = makeRegistry(root);
  std::filesystem::remove(root.templatePath("audit"));
  const ReloadReport report = registry->reload({"audit"});
  EXPECT_EQ(report.removed, (std::vector<std::string>{"audit"}));
  const auto snapshot = registry->snapshot();
  EXPECT_TRUE(snapshot->apps().empty());
  ASSERT_EQ(snapshot->ignored().size(), 1u);
  EXPECT_EQ(snapshot->ignored()[0].reason, "no template.yaml");
}

TEST(Registry, ReloadTouchesOnlyTheNamedApps) {
  AppsRoot root;
  root.writeExecApp("audit", 2);
  root.writeExecApp("billing", 2);
  const auto registry = makeRegistry(root);
  root.writeExecApp("audit", 3);
  root.writeExecApp("billing", 3);
  (void)registry->reload({"audit"});
  const auto snapshot = registry->snapshot();
  EXPECT_EQ(snapshot->find("audit")->app->concurrency, 3);
  EXPECT_EQ(snapshot->find("billing")->app->concurrency, 2);
  // The unchanged app is shared with the previous snapshot, not reloaded.
  EXPECT_EQ(names(*snapshot), (std::vector<std::string>{"audit", "billing"}));
}

TEST(Registry, ReloadAllFindsAdditionsAndRemovals) {
  AppsRoot root;
  root.writeExecApp("audit");
  root.writeExecApp("billing");
  const auto registry = makeRegistry(root);
  std::filesystem::remove_all(root.appDir("audit"));
  root.writeExecApp("crm");
  const ReloadReport report = registry->reloadAll();
  EXPECT_EQ(report.added, (std::vector<std::string>{"crm"}));
  EXPECT_EQ(report.removed, (std::vector<std::string>{"audit"}));
  EXPECT_EQ(report.updated, (std::vector<std::string>{"billing"}));
  EXPECT_EQ(names(*registry->snapshot()), (std::vector<std::string>{"billing", "crm"}));
}

TEST(Registry, AvailabilityCheckDecidesWhetherAValidAppIsAvailable) {
  AppsRoot root;
  root.writeExecApp("audit");
  root.writeExecApp("billing");
  std::atomic<bool> image_present = false;
  const auto registry = makeRegistry(root, [&image_present](const App& app) {
    if (app.name == "audit" || image_present) return runtime::Availability{};
    return runtime::Availability{false, "image debian:12-slim is not present"};
  });
  EXPECT_TRUE(registry->snapshot()->find("audit")->status.available);
  const AppEntry* billing = registry->snapshot()->find("billing");
  EXPECT_TRUE(billing->status.loaded);
  EXPECT_FALSE(billing->status.available);
  EXPECT_EQ(billing->status.reason, "image debian:12-slim is not present");
  EXPECT_FALSE(registry->refreshAvailability());  // nothing changed: no new snapshot
  image_present = true;
  EXPECT_TRUE(registry->refreshAvailability());
  EXPECT_TRUE(registry->snapshot()->find("billing")->status.available);
}

TEST(Registry, VanishedRootKeepsTheAppsButMakesThemUnavailable) {
  AppsRoot root;
  const std::filesystem::path apps = root.path() / "apps";
  root.writeExecApp("apps/audit");
  const auto registry = Registry::create({apps, {}});
  ASSERT_TRUE(registry.ok());
  std::filesystem::rename(apps, root.path() / "elsewhere");
  const ReloadReport report = (*registry)->reloadAll();
  ASSERT_TRUE(report.root_error.has_value());
  const AppEntry* audit = (*registry)->snapshot()->find("audit");
  ASSERT_NE(audit, nullptr);
  EXPECT_TRUE(audit->status.loaded);
  EXPECT_FALSE(audit->status.available);
  EXPECT_EQ(audit->status.reason,
            "apps root " + apps.string() + " does not exist; keeping the last rules");
  std::filesystem::rename(root.path() / "elsewhere", apps);
  EXPECT_FALSE((*registry)->reloadAll().root_error.has_value());
  EXPECT_TRUE((*registry)->snapshot()->find("audit")->status.available);
}

TEST(Registry, ReloadingAppsOfAVanishedRootKeepsThem) {
  AppsRoot root;
  const std::filesystem::path apps = root.path() / "apps";
  root.writeExecApp("apps/audit");
  const auto registry = Registry::create({apps, {}});
  ASSERT_TRUE(registry.ok());
  std::filesystem::rename(apps, root.path() / "elsewhere");
  const ReloadReport report = (*registry)->reload({"audit"});
  EXPECT_TRUE(report.root_error.has_value());
  EXPECT_TRUE(report.removed.empty());
  const AppEntry* audit = (*registry)->snapshot()->find("audit");
  ASSERT_NE(audit, nullptr);
  EXPECT_TRUE(audit->status.loaded);
  EXPECT_FALSE(audit->status.available);
}

TEST(Registry, CreateFailsWhenTheRootCannotBeListed) {
  AppsRoot root;
  const auto registry = Registry::create({root.path() / "missing", {}});
  ASSERT_FALSE(registry.ok());
  EXPECT_EQ(registry.error().kind, ErrorKind::kNotFound);
}

TEST(Registry, ReadersNeverSeeAHalfAppliedReload) {
  // Two apps always rewritten together to the same version and reloaded in one call: any
  // snapshot showing them at different versions would be a torn read.
  AppsRoot root;
  root.writeExecApp("left", 1);
  root.writeExecApp("right", 1);
  const auto registry = makeRegistry(root);
  std::atomic<bool> done = false;
  std::atomic<int> torn = 0;
  std::atomic<int> reads = 0;
  std::vector<std::thread> readers;
  for (int i = 0; i < 2; ++i) {
    readers.emplace_back([&] {
      while (!done) {
        const auto snapshot = registry->snapshot();
        const AppEntry* left = snapshot->find("left");
        const AppEntry* right = snapshot->find("right");
        if (left == nullptr || right == nullptr ||
            left->app->concurrency != right->app->concurrency) {
          ++torn;
        }
        ++reads;
      }
    });
  }
  for (int version = 2; version <= 40; ++version) {
    root.writeExecApp("left", version);
    root.writeExecApp("right", version);
    (void)registry->reload({"left", "right"});
  }
  done = true;
  for (std::thread& reader : readers) reader.join();
  EXPECT_EQ(torn, 0);
  EXPECT_GT(reads, 0);
  EXPECT_EQ(registry->snapshot()->find("left")->app->concurrency, 40);
}

TEST(Registry, ReloadChangedRescansWhenAsked) {
  AppsRoot root;
  root.writeExecApp("audit");
  const auto registry = makeRegistry(root);
  root.writeExecApp("billing");
  ChangeSet changes;
  changes.rescan = true;
  const ReloadReport report = registry->reloadChanged(changes);
  EXPECT_EQ(report.added, (std::vector<std::string>{"billing"}));
}

}  // namespace
}  // namespace relay::app

namespace relay::app {
namespace {

// docs/apps.md "Loaded, available, and reloads": the last valid template kept beyond this process.
class KeptTemplates {
 public:
  TemplateKeeper keeper() {
    return {[this](const std::string& app, const std::string& text) { kept[app] = text; },
            [this](const std::string& app) -> std::optional<std::string> {
              recalled.push_back(app);
              auto found = kept.find(app);
              if (found == kept.end()) return std::nullopt;
              return found->second;
            }};
  }
  std::map<std::string, std::string> kept;
  std::vector<std::string> recalled;
};

TEST(Registry, AValidTemplateIsKept) {
  testing::AppsRoot root;
  root.writeExecApp("orders");
  KeptTemplates store;
  auto registry = Registry::create({root.path(), {}, store.keeper()});
  ASSERT_TRUE(registry.ok());
  ASSERT_TRUE(store.kept.count("orders"));
  EXPECT_NE(store.kept["orders"].find("bin/h.sh"), std::string::npos);
  EXPECT_TRUE(store.recalled.empty());
}

TEST(Registry, AnInvalidTemplateAtStartTakesTheKeptRulesAndStaysUnavailable) {
  testing::AppsRoot root;
  root.writeExecApp("orders");
  KeptTemplates store;
  (void)Registry::create({root.path(), {}, store.keeper()});
  root.writeTemplate("orders", "runtime: exec\nevents: [oops\n");
  auto restarted = Registry::create({root.path(), {}, store.keeper()});
  ASSERT_TRUE(restarted.ok());
  const AppEntry* entry = (*restarted)->snapshot()->find("orders");
  ASSERT_NE(entry, nullptr);
  ASSERT_NE(entry->app, nullptr);
  EXPECT_EQ(entry->app->rules.size(), 1u);
  EXPECT_TRUE(entry->status.loaded);
  EXPECT_FALSE(entry->status.available);
  EXPECT_FALSE(entry->errors.empty());  // the current template's problems are still reported
}

TEST(Registry, WithNothingKeptAnInvalidAppHasNoRules) {
  testing::AppsRoot root;
  root.writeTemplate("orders", "runtime: exec\nevents: [oops\n");
  KeptTemplates store;
  auto registry = Registry::create({root.path(), {}, store.keeper()});
  ASSERT_TRUE(registry.ok());
  EXPECT_EQ((*registry)->snapshot()->find("orders")->app, nullptr);
  EXPECT_EQ(store.recalled, std::vector<std::string>{"orders"});
}

}  // namespace
}  // namespace relay::app
