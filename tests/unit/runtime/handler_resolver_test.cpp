#include "runtime/handler_resolver.h"

#include <gtest/gtest.h>

#include "fakes/temp_dir.h"

namespace relay::runtime {
namespace {

using relay::testing::TempDir;

TEST(HandlerResolver, NodeLooksUpCandidatesInSpecOrder) {
  const std::vector<std::filesystem::path> expected = {"a/b.mjs", "a/b/index.mjs", "a/b.js",
                                                       "a/b/index.js", "a/b.cjs"};
  EXPECT_EQ(handlerCandidates(Language::kNode, "a.b.fn"), expected);
}

TEST(HandlerResolver, PythonModuleIsAPathOfPackages) {
  const std::vector<std::filesystem::path> expected = {"jobs/nightly/report.py"};
  EXPECT_EQ(handlerCandidates(Language::kPython3, "jobs.nightly.report.run"), expected);
}

TEST(HandlerResolver, NodePicksTheFirstCandidateThatExists) {
  TempDir dir;
  dir.write("a/b/index.js", "");
  dir.write("a/b.cjs", "");
  const auto target = resolveHandler(Language::kNode, dir.path(), "a.b.handle");
  ASSERT_TRUE(target.ok()) << target.error().message;
  EXPECT_EQ(target->file, "a/b/index.js");
  EXPECT_EQ(target->function, "handle");
}

TEST(HandlerResolver, ExecRunsTheFileItself) {
  TempDir dir;
  dir.write("bin/run", "#!/bin/sh\n", 0700);
  const auto target = resolveHandler(Language::kExec, dir.path(), "bin/run");
  ASSERT_TRUE(target.ok()) << target.error().message;
  EXPECT_EQ(target->file, "bin/run");
  EXPECT_EQ(target->function, "");
}

TEST(HandlerResolver, MissingFileIsNotFound) {
  TempDir dir;
  const auto target = resolveHandler(Language::kPython3, dir.path(), "a.fn");
  ASSERT_FALSE(target.ok());
  EXPECT_EQ(target.error().kind, ErrorKind::kNotFound);
}

TEST(HandlerResolver, SymlinkLeavingTheAppDirectoryIsRefused) {
  TempDir dir;
  dir.write("outside/tool.sh", "#!/bin/sh\n", 0755);
  dir.write("app/template.yaml", "");
  std::filesystem::create_directories(dir.path() / "app/bin");
  std::filesystem::create_symlink("../../outside/tool.sh", dir.path() / "app/bin/tool.sh");
  const auto target = resolveHandler(Language::kExec, dir.path() / "app", "bin/tool.sh");
  ASSERT_FALSE(target.ok());
  EXPECT_EQ(target.error().message,
            "bin/tool.sh resolves outside the app directory (to " +
                std::filesystem::canonical(dir.path() / "outside/tool.sh").string() + ")");
}

TEST(HandlerResolver, SymlinksThatStayInsideTheAppDirectoryAreFollowed) {
  TempDir dir;
  dir.write("app/lib/tool.sh", "#!/bin/sh\n", 0755);
  std::filesystem::create_directories(dir.path() / "app/bin");
  // Relative (checked in one kernel walk) and absolute (the kernel's beneath-walk refuses any
  // absolute link, so the canonical paths decide): both land inside.
  std::filesystem::create_symlink("../lib/tool.sh", dir.path() / "app/bin/relative.sh");
  std::filesystem::create_symlink(dir.path() / "app/lib/tool.sh",
                                  dir.path() / "app/bin/absolute.sh");
  for (const char* handler : {"bin/relative.sh", "bin/absolute.sh"}) {
    const auto target = resolveHandler(Language::kExec, dir.path() / "app", handler);
    ASSERT_TRUE(target.ok()) << handler << ": " << target.error().message;
    EXPECT_EQ(target->file, handler);
  }
}

TEST(HandlerResolver, AnAbsoluteSymlinkLeavingTheAppDirectoryIsRefused) {
  TempDir dir;
  dir.write("outside/tool.sh", "#!/bin/sh\n", 0755);
  std::filesystem::create_directories(dir.path() / "app/bin");
  std::filesystem::create_symlink(dir.path() / "outside/tool.sh", dir.path() / "app/bin/tool.sh");
  const auto target = resolveHandler(Language::kExec, dir.path() / "app", "bin/tool.sh");
  ASSERT_FALSE(target.ok());
  EXPECT_NE(target.error().message.find("resolves outside the app directory"), std::string::npos);
}

TEST(HandlerResolver, AppDirectoryReachedThroughASymlinkIsStillItsOwnRoot) {
  TempDir dir;
  dir.write("real/bin/run", "#!/bin/sh\n", 0755);
  std::filesystem::create_directory_symlink(dir.path() / "real", dir.path() / "link");
  EXPECT_TRUE(resolveHandler(Language::kExec, dir.path() / "link", "bin/run").ok());
}

TEST(HandlerResolver, DirectoryIsNotAHandler) {
  TempDir dir;
  std::filesystem::create_directories(dir.path() / "a/b.py");
  const auto target = resolveHandler(Language::kPython3, dir.path(), "a.b.fn");
  ASSERT_FALSE(target.ok());
  EXPECT_EQ(target.error().message, "a/b.py is not a regular file");
}

TEST(HandlerResolver, DollarIsALetterOnlyWhenAllowed) {
  EXPECT_FALSE(isIdentifier("$handler"));
  EXPECT_TRUE(isIdentifier("$handler", /*allow_dollar=*/true));
}

TEST(HandlerResolver, ExecNeedsAnExecuteBit) {
  TempDir dir;
  dir.write("bin/plain.sh", "#!/bin/sh\n", 0644);
  dir.write("bin/others.sh", "#!/bin/sh\n", 0601);
  const auto plain = resolveHandler(Language::kExec, dir.path(), "bin/plain.sh");
  ASSERT_FALSE(plain.ok());
  EXPECT_EQ(plain.error().message, "bin/plain.sh is not executable (chmod +x bin/plain.sh)");
  // The backends run handlers as another user, so any execute bit counts, whoever checks.
  EXPECT_TRUE(resolveHandler(Language::kExec, dir.path(), "bin/others.sh").ok());
}

TEST(HandlerResolver, NodeCandidatesRankInSpecOrder) {
  TempDir dir;
  // Each newly written candidate outranks the ones before it.
  for (const char* file :
       {"orders.cjs", "orders/index.js", "orders.js", "orders/index.mjs", "orders.mjs"}) {
    dir.write(file, "export function fn() {}\n");
    const auto target = resolveHandler(Language::kNode, dir.path(), "orders.fn");
    ASSERT_TRUE(target.ok()) << target.error().message;
    EXPECT_EQ(target->file, file);
  }
}

TEST(HandlerResolver, SyntaxDependsOnTheRuntime) {
  EXPECT_TRUE(checkHandlerName(Language::kExec, "bin/on-insert.sh").ok());
  EXPECT_FALSE(checkHandlerName(Language::kExec, "bin//x").ok());
  EXPECT_FALSE(checkHandlerName(Language::kExec, "./x").ok());
  EXPECT_FALSE(checkHandlerName(Language::kExec, "x/").ok());
  EXPECT_FALSE(checkHandlerName(Language::kExec, "a\nb").ok());
  EXPECT_TRUE(checkHandlerName(Language::kNode, "lib.$on").ok());
  EXPECT_FALSE(checkHandlerName(Language::kPython3, "lib.$on").ok());
  EXPECT_FALSE(checkHandlerName(Language::kPython3, "lib..on").ok());
  EXPECT_FALSE(checkHandlerName(Language::kPython3, "1lib.on").ok());
  EXPECT_FALSE(checkHandlerName(Language::kNode, "bin/x.js").ok());
  EXPECT_FALSE(checkHandlerName(Language::kNode, "").ok());
}

}  // namespace
}  // namespace relay::runtime
