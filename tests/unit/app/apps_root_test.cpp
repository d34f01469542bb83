#include "app/apps_root.h"

#include <gtest/gtest.h>

#include "fakes/temp_dir.h"

namespace relay::app {
namespace {

using relay::testing::TempDir;

TEST(AppsRoot, ListsAppDirectoriesSortedByName) {
  TempDir root;
  root.write("zeta/template.yaml", "");
  root.write("alpha/template.yaml", "");
  root.write("mid/template.yaml", "");
  const auto listing = listAppsRoot(root.path());
  ASSERT_TRUE(listing.ok()) << listing.error().message;
  ASSERT_EQ(listing->apps.size(), 3u);
  EXPECT_EQ(listing->apps[0].name, "alpha");
  EXPECT_EQ(listing->apps[1].name, "mid");
  EXPECT_EQ(listing->apps[2].name, "zeta");
  EXPECT_EQ(listing->apps[0].dir, root.path() / "alpha");
}

TEST(AppsRoot, DirectoriesWithoutTemplateAreIgnoredWithAReason) {
  TempDir root;
  root.write("docs/README.md", "");
  root.write("typo/template.yml", "");
  const auto listing = listAppsRoot(root.path());
  ASSERT_TRUE(listing.ok());
  EXPECT_TRUE(listing->apps.empty());
  ASSERT_EQ(listing->ignored.size(), 2u);
  EXPECT_EQ(listing->ignored[0].dir, root.path() / "docs");
  EXPECT_EQ(listing->ignored[0].reason, "no template.yaml");
  EXPECT_EQ(listing->ignored[1].reason,
            "no template.yaml (found template.yml; Relay reads template.yaml)");
}

TEST(AppsRoot, HiddenEntriesAndPlainFilesAreSkippedSilently) {
  TempDir root;
  root.write(".git/template.yaml", "");
  root.write("README.md", "");
  const auto listing = listAppsRoot(root.path());
  ASSERT_TRUE(listing.ok());
  EXPECT_TRUE(listing->apps.empty());
  EXPECT_TRUE(listing->ignored.empty());
}

TEST(AppsRoot, InvalidNamesAreStillListedForTheLoaderToReport) {
  TempDir root;
  root.write("Bad Name/template.yaml", "");
  const auto listing = listAppsRoot(root.path());
  ASSERT_TRUE(listing.ok());
  ASSERT_EQ(listing->apps.size(), 1u);
  EXPECT_EQ(listing->apps[0].name, "Bad Name");
}

TEST(AppsRoot, SymlinkedAppDirectoryCounts) {
  TempDir root;
  root.write("real/users/template.yaml", "");
  std::filesystem::create_directories(root.path() / "apps");
  std::filesystem::create_directory_symlink(root.path() / "real/users", root.path() / "apps/users");
  const auto listing = listAppsRoot(root.path() / "apps");
  ASSERT_TRUE(listing.ok());
  ASSERT_EQ(listing->apps.size(), 1u);
  EXPECT_EQ(listing->apps[0].name, "users");
}

TEST(AppsRoot, MissingRootIsNotFound) {
  TempDir root;
  const auto listing = listAppsRoot(root.path() / "nope");
  ASSERT_FALSE(listing.ok());
  EXPECT_EQ(listing.error().kind, ErrorKind::kNotFound);
  EXPECT_EQ(listing.error().message,
            "apps root " + (root.path() / "nope").string() + " does not exist");
}

TEST(AppsRoot, RootThatIsAFileIsInvalid) {
  TempDir root;
  root.write("file", "");
  const auto listing = listAppsRoot(root.path() / "file");
  ASSERT_FALSE(listing.ok());
  EXPECT_EQ(listing.error().kind, ErrorKind::kInvalidArgument);
}

}  // namespace
}  // namespace relay::app
