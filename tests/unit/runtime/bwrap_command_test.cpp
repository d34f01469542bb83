#include "runtime/sandbox/bwrap_command.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace relay::runtime {
namespace {

using Argv = std::vector<std::string>;

InvocationSpec execSpec() {
  InvocationSpec spec;
  spec.app = "app";
  spec.app_dir = "/srv/apps/app";
  spec.handler = "bin/run.sh";
  return spec;
}

bool hasSequence(const Argv& argv, const Argv& sequence) {
  return std::search(argv.begin(), argv.end(), sequence.begin(), sequence.end()) != argv.end();
}

bool has(const Argv& argv, const std::string& arg) {
  return std::find(argv.begin(), argv.end(), arg) != argv.end();
}

TEST(BwrapArgv, LoadsTheSeccompProgramFromTheInheritedDescriptor) {
  const Argv argv = bwrapArgv({}, {"/usr/bin/bwrap", true, "", ""}, execSpec());
  EXPECT_EQ(argv.front(), "/usr/bin/bwrap");
  EXPECT_TRUE(hasSequence(argv, {"--seccomp", std::to_string(kSeccompFd)}));
}

TEST(BwrapArgv, DisablesUserNamespacesWhereBwrapCan) {
  EXPECT_TRUE(has(bwrapArgv({}, {"bwrap", true, "", ""}, execSpec()), "--disable-userns"));
  EXPECT_FALSE(has(bwrapArgv({}, {"bwrap", false, "", ""}, execSpec()), "--disable-userns"));
}

TEST(BwrapArgv, UnsharesEverythingAndDropsCapabilities) {
  const Argv argv = bwrapArgv({}, {}, execSpec());
  EXPECT_TRUE(has(argv, "--unshare-all"));
  EXPECT_TRUE(hasSequence(argv, {"--cap-drop", "ALL"}));
  EXPECT_TRUE(hasSequence(argv, {"--uid", "65534", "--gid", "65534"}));
  EXPECT_FALSE(has(argv, "--share-net"));
}

TEST(BwrapArgv, MountsTheAppReadOnlyAndRunsTheHandlerAfterTheSeparator) {
  const Argv argv = bwrapArgv({}, {}, execSpec());
  EXPECT_TRUE(hasSequence(argv, {"--ro-bind", "/srv/apps/app", "/app", "--remount-ro", "/",
                                 "--chdir", "/app", "--", "/app/bin/run.sh"}));
  EXPECT_EQ(argv.back(), "/app/bin/run.sh");
}

TEST(BwrapArgv, RemountsTheRootReadOnlyAfterEveryOtherMount) {
  const Argv argv = bwrapArgv({}, {}, execSpec());
  const auto remount = std::find(argv.begin(), argv.end(), "/") - 1;
  ASSERT_EQ(*remount, "--remount-ro");
  for (auto it = remount + 2; *it != "--"; ++it) {
    EXPECT_TRUE(*it == "--chdir" || *it == "/app") << "after --remount-ro /: " << *it;
  }
  EXPECT_TRUE(hasSequence(argv, {"--dev", "/dev", "--remount-ro", "/dev"}));
}

TEST(BwrapArgv, NeverExposesRootOrHome) {
  const Argv argv = bwrapArgv({}, {}, execSpec());
  for (const char* path : {"/root", "/home", "/"}) {
    EXPECT_FALSE(hasSequence(argv, {"--ro-bind", path, path})) << path;
    EXPECT_FALSE(hasSequence(argv, {"--bind", path, path})) << path;
  }
}

TEST(SandboxArgv, WithoutNetworkIsBwrapAlone) {
  const Argv argv = sandboxArgv({}, {"/usr/bin/bwrap", true, "/usr/bin/pasta", ""}, execSpec());
  EXPECT_EQ(argv.front(), "/usr/bin/bwrap");
  EXPECT_FALSE(has(argv, "/usr/bin/pasta"));
}

TEST(SandboxArgv, NetworkRunsBwrapUnderPastaWithNothingForwardedToTheHost) {
  InvocationSpec spec = execSpec();
  spec.network = true;
  const Argv argv = sandboxArgv({}, {"/usr/bin/bwrap", true, "/usr/bin/pasta", ""}, spec);
  EXPECT_EQ(argv.front(), "/usr/bin/pasta");
  for (const char* option : {"--tcp-ports", "--udp-ports", "--tcp-ns", "--udp-ns"}) {
    EXPECT_TRUE(hasSequence(argv, {option, "none"})) << option;
  }
  EXPECT_TRUE(has(argv, "--no-map-gw"));
  EXPECT_TRUE(hasSequence(argv, {"--", "/usr/bin/bwrap"}));
  EXPECT_TRUE(has(argv, "--share-net"));  // bwrap keeps pasta's namespace
  EXPECT_EQ(argv.back(), "/app/bin/run.sh");
}

TEST(SandboxArgv, NetworkMountsAProcOfPastasPidNamespaceForBwrap) {
  InvocationSpec spec = execSpec();
  spec.network = true;
  const Argv argv =
      sandboxArgv({}, {"/usr/bin/bwrap", true, "/usr/bin/pasta", "/usr/bin/unshare"}, spec);
  EXPECT_EQ(argv.front(), "/usr/bin/pasta");
  EXPECT_TRUE(
      hasSequence(argv, {"--", "/usr/bin/unshare", "--mount-proc", "--", "/usr/bin/bwrap"}));
}

}  // namespace
}  // namespace relay::runtime
