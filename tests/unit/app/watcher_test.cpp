#include "app/watcher.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <set>
#include <string>

#include "app/registry.h"
#include "app_test_util.h"
#include "common/system_clock.h"
#include "common/unique_fd.h"
#include "fakes/fake_clock.h"

namespace relay::app {
namespace {

using std::chrono::milliseconds;
using testing::AppsRoot;

constexpr milliseconds kDebounce{300};

// inotify queues events synchronously with the file operation, so one non-blocking poll after
// the operation sees them: these tests never wait for the kernel.
class Watcher : public ::testing::Test {
 protected:
  void SetUp() override {
    root_.writeExecApp("audit");
    root_.writeExecApp("billing");
    auto watcher = app::Watcher::create(root_.path(), clock_, {.debounce = kDebounce});
    ASSERT_TRUE(watcher.ok()) << watcher.error().message;
    watcher_ = std::move(watcher).value();
  }

  // Polls without waiting, lets the debounce window pass, and polls again.
  ChangeSet settle() {
    EXPECT_TRUE(watcher_->poll(milliseconds(0)).empty());
    clock_.advance(kDebounce);
    return watcher_->poll(milliseconds(0));
  }

  AppsRoot root_;
  relay::testing::FakeClock clock_;
  std::unique_ptr<app::Watcher> watcher_;
};

TEST_F(Watcher, NothingChangedReportsNothing) {
  clock_.advance(kDebounce * 2);
  EXPECT_TRUE(watcher_->poll(milliseconds(0)).empty());
  EXPECT_FALSE(watcher_->hasPending());
}

TEST_F(Watcher, AReadableWakeDescriptorEndsTheWaitWithoutTakingAChange) {
  const UniqueFd wake(::eventfd(1, EFD_CLOEXEC));  // readable from the start
  ASSERT_TRUE(wake.valid());
  SystemClock real;
  const MonoTime start = real.monotonicNow();
  // Without the wake descriptor this blocks until the watcher's own 60-second cap.
  EXPECT_TRUE(watcher_->poll(std::chrono::hours(1), wake.get()).empty());
  EXPECT_LT(real.monotonicNow() - start, std::chrono::seconds(30));
  // The descriptor is left as it was (its count still there), and changes are still reported.
  std::uint64_t count = 0;
  EXPECT_EQ(::read(wake.get(), &count, sizeof count), static_cast<ssize_t>(sizeof count));
  root_.writeExecApp("audit", 9);
  EXPECT_EQ(settle().apps, (std::set<std::string>{"audit"}));
}

TEST_F(Watcher, ModifiedTemplateIsReportedAfterTheDebounce) {
  root_.writeExecApp("audit", 9);
  EXPECT_TRUE(watcher_->poll(milliseconds(0)).empty());
  EXPECT_TRUE(watcher_->hasPending());
  clock_.advance(kDebounce - milliseconds(1));
  EXPECT_TRUE(watcher_->poll(milliseconds(0)).empty());
  clock_.advance(milliseconds(1));
  const ChangeSet changes = watcher_->poll(milliseconds(0));
  EXPECT_EQ(changes.apps, (std::set<std::string>{"audit"}));
  EXPECT_FALSE(changes.rescan);
  EXPECT_FALSE(watcher_->hasPending());
}

TEST_F(Watcher, EveryEventRestartsTheDebounceWindow) {
  root_.writeExecApp("audit", 5);
  EXPECT_TRUE(watcher_->poll(milliseconds(0)).empty());
  clock_.advance(kDebounce - milliseconds(10));
  root_.writeExecApp("audit", 6);
  EXPECT_TRUE(watcher_->poll(milliseconds(0)).empty());
  clock_.advance(milliseconds(20));
  EXPECT_TRUE(watcher_->poll(milliseconds(0)).empty());  // only 20ms since the last write
  clock_.advance(kDebounce);
  EXPECT_EQ(watcher_->poll(milliseconds(0)).apps, (std::set<std::string>{"audit"}));
}

TEST_F(Watcher, EditorRenameOverTheTemplateIsReported) {
  root_.writeFile("billing", ".template.yaml.swp", "runtime: exec\n");
  ASSERT_EQ(std::rename((root_.appDir("billing") / ".template.yaml.swp").c_str(),
                        root_.templatePath("billing").c_str()),
            0);
  EXPECT_EQ(settle().apps, (std::set<std::string>{"billing"}));
}

TEST_F(Watcher, ChmodOfAHandlerIsReported) {
  std::filesystem::permissions(root_.appDir("audit") / "bin/h.sh",
                               std::filesystem::perms::owner_read);
  EXPECT_EQ(settle().apps, (std::set<std::string>{"audit"}));
}

TEST_F(Watcher, FilesInNestedHandlerDirectoriesAreWatched) {
  root_.writeFile("audit", "bin/more/x.sh", "#!/bin/sh\n", 0755);  // new subdirectory
  EXPECT_EQ(settle().apps, (std::set<std::string>{"audit"}));
  root_.writeFile("audit", "bin/more/x.sh", "#!/bin/sh\necho changed\n", 0755);
  EXPECT_EQ(settle().apps, (std::set<std::string>{"audit"}));
}

TEST_F(Watcher, NewAppDirectoryIsReportedAndThenWatched) {
  root_.writeExecApp("crm");
  EXPECT_EQ(settle().apps, (std::set<std::string>{"crm"}));
  root_.writeExecApp("crm", 12);
  EXPECT_EQ(settle().apps, (std::set<std::string>{"crm"}));
}

TEST_F(Watcher, RemovedAppDirectoryIsReported) {
  std::filesystem::remove_all(root_.appDir("billing"));
  EXPECT_EQ(settle().apps, (std::set<std::string>{"billing"}));
}

TEST_F(Watcher, RenamedAppDirectoryReportsBothNames) {
  std::filesystem::rename(root_.appDir("billing"), root_.appDir("invoices"));
  EXPECT_EQ(settle().apps, (std::set<std::string>{"billing", "invoices"}));
  root_.writeExecApp("invoices", 3);  // the moved directory is watched under its new name
  EXPECT_EQ(settle().apps, (std::set<std::string>{"invoices"}));
}

TEST_F(Watcher, HiddenEntriesAtTheRootAreIgnored) {
  std::filesystem::create_directories(root_.path() / ".staging");
  clock_.advance(kDebounce);
  EXPECT_TRUE(watcher_->poll(milliseconds(0)).empty());
  EXPECT_FALSE(watcher_->hasPending());
}

TEST_F(Watcher, RemovedRootAsksForARescanAndRecovers) {
  const std::filesystem::path moved = root_.path().string() + "-moved";
  std::filesystem::rename(root_.path(), moved);
  const ChangeSet changes = watcher_->poll(milliseconds(0));
  EXPECT_TRUE(changes.rescan);
  std::filesystem::rename(moved, root_.path());
  EXPECT_TRUE(watcher_->poll(milliseconds(0)).rescan);  // the root is back: read it again
  root_.writeExecApp("audit", 2);
  EXPECT_EQ(settle().apps, (std::set<std::string>{"audit"}));
}

TEST_F(Watcher, ChangesDriveRegistryReloads) {
  auto registry = Registry::create({root_.path(), {}});
  ASSERT_TRUE(registry.ok());
  root_.writeTemplate("audit", "runtime: exec\nconcurrency: 0\n");
  root_.writeExecApp("crm");
  const ChangeSet changes = settle();
  const ReloadReport report = (*registry)->reloadChanged(changes);
  EXPECT_EQ(report.invalid, (std::vector<std::string>{"audit"}));
  EXPECT_EQ(report.added, (std::vector<std::string>{"crm"}));
  const auto snapshot = (*registry)->snapshot();
  EXPECT_FALSE(snapshot->find("audit")->status.available);
  EXPECT_TRUE(snapshot->find("crm")->status.available);
}

TEST_F(Watcher, PollWaitsAtMostItsTimeout) {
  // With the fake clock frozen the debounce never ends; poll must still return.
  root_.writeExecApp("audit", 3);
  EXPECT_TRUE(watcher_->poll(milliseconds(5)).empty());
  EXPECT_TRUE(watcher_->hasPending());
}

}  // namespace
}  // namespace relay::app
