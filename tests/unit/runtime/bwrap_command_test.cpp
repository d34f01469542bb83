#include "runtime/sandbox/bwrap_command.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace relay::runtime {
namespace {

using Argv = std::vector<std::string>;

constexpr uid_t kId = 1879050000;  // an app's sandbox uid

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
  const Argv argv = bwrapArgv({}, {"/usr/bin/bwrap", true, "", "", ""}, execSpec(), kId);
  EXPECT_EQ(argv.front(), "/usr/bin/bwrap");
  EXPECT_TRUE(hasSequence(argv, {"--seccomp", std::to_string(kSeccompFd)}));
}

TEST(BwrapArgv, DisablesUserNamespacesWhereBwrapCan) {
  EXPECT_TRUE(has(bwrapArgv({}, {"bwrap", true, "", "", ""}, execSpec(), kId), "--disable-userns"));
  EXPECT_FALSE(
      has(bwrapArgv({}, {"bwrap", false, "", "", ""}, execSpec(), kId), "--disable-userns"));
}

TEST(BwrapArgv, UnsharesEverythingAndDropsCapabilities) {
  const Argv argv = bwrapArgv({}, {}, execSpec(), kId);
  EXPECT_TRUE(has(argv, "--unshare-all"));
  EXPECT_TRUE(hasSequence(argv, {"--cap-drop", "ALL"}));
  // The app's own id inside, as outside (docs/runtimes.md "Identities").
  EXPECT_TRUE(hasSequence(argv, {"--uid", "1879050000", "--gid", "1879050000"}));
  EXPECT_FALSE(has(argv, "--share-net"));
}

TEST(BwrapArgv, MountsTheAppReadOnlyAndRunsTheHandlerAfterTheSeparator) {
  const Argv argv = bwrapArgv({}, {}, execSpec(), kId);
  EXPECT_TRUE(hasSequence(argv, {"--ro-bind", "/srv/apps/app", "/app", "--remount-ro", "/",
                                 "--chdir", "/app", "--", "/app/bin/run.sh"}));
  EXPECT_EQ(argv.back(), "/app/bin/run.sh");
}

TEST(BwrapArgv, RemountsTheRootReadOnlyAfterEveryOtherMount) {
  const Argv argv = bwrapArgv({}, {}, execSpec(), kId);
  const auto remount = std::find(argv.begin(), argv.end(), "/") - 1;
  ASSERT_EQ(*remount, "--remount-ro");
  for (auto it = remount + 2; *it != "--"; ++it) {
    EXPECT_TRUE(*it == "--chdir" || *it == "/app") << "after --remount-ro /: " << *it;
  }
  EXPECT_TRUE(hasSequence(argv, {"--dev", "/dev", "--remount-ro", "/dev"}));
}

TEST(BwrapArgv, NeverExposesRootOrHome) {
  const Argv argv = bwrapArgv({}, {}, execSpec(), kId);
  for (const char* path : {"/root", "/home", "/"}) {
    EXPECT_FALSE(hasSequence(argv, {"--ro-bind", path, path})) << path;
    EXPECT_FALSE(hasSequence(argv, {"--bind", path, path})) << path;
  }
}

TEST(BwrapArgv, AnImageRootReplacesTheHostsSystemPaths) {
  // Docs/runtimes.md "Image roots": the image's top level, never the host's /usr; what the
  // sandbox makes itself (/proc, /dev, /tmp, /app, /run) is never the image's.
  const image::ImageRoot root(
      "sha256:" + std::string(64, 'a'), "/cache/aaaa/rootfs", 0,
      {{"bin", "usr/bin"}, {"etc", ""}, {"proc", ""}, {"run", ""}, {"tmp", ""}, {"usr", ""}},
      UniqueFd());
  InvocationSpec spec = execSpec();
  spec.network = true;
  const Argv argv = bwrapArgv({}, {}, spec, kId, {}, {"/app/bin/run.sh"}, &root);
  EXPECT_TRUE(hasSequence(argv, {"--symlink", "usr/bin", "/bin"}));
  EXPECT_TRUE(hasSequence(argv, {"--ro-bind", "/cache/aaaa/rootfs/usr", "/usr"}));
  EXPECT_TRUE(hasSequence(argv, {"--ro-bind", "/cache/aaaa/rootfs/etc", "/etc"}));
  for (const char* own : {"proc", "run", "tmp"}) {
    EXPECT_FALSE(has(argv, std::string("/cache/aaaa/rootfs/") + own)) << own;
  }
  EXPECT_FALSE(hasSequence(argv, {"--ro-bind-try", "/usr", "/usr"}));
  EXPECT_FALSE(has(argv, "/etc/ld.so.cache"));
  // The host's resolver files go over the image's /etc, so after it.
  const auto etc = std::find(argv.begin(), argv.end(), "/cache/aaaa/rootfs/etc");
  const auto resolv = std::find(argv.begin(), argv.end(), "/etc/resolv.conf");
  EXPECT_LT(etc, resolv);
  EXPECT_TRUE(hasSequence(argv, {"--proc", "/proc", "--dev", "/dev"}));
  EXPECT_TRUE(hasSequence(argv, {"--remount-ro", "/", "--chdir", "/app", "--"}));
}

TEST(SandboxArgv, WithoutNetworkIsBwrapAlone) {
  const Argv argv = sandboxArgv(
      {}, {"/usr/bin/bwrap", true, "/usr/bin/pasta", "/opt/relay-launcher", ""}, execSpec(), kId);
  EXPECT_EQ(argv.front(), "/usr/bin/bwrap");
  EXPECT_FALSE(has(argv, "/usr/bin/pasta"));
}

TEST(SandboxArgv, NetworkRunsBwrapUnderPastaWithNothingForwardedToTheHost) {
  InvocationSpec spec = execSpec();
  spec.network = true;
  EgressPolicy egress;
  egress.denied = linkLocalBlocks();
  const Argv argv = sandboxArgv(
      {}, {"/usr/bin/bwrap", true, "/usr/bin/pasta", "/opt/relay-launcher", ""}, spec, kId, egress);
  EXPECT_EQ(argv.front(), "/usr/bin/pasta");
  for (const char* option : {"--tcp-ports", "--udp-ports", "--tcp-ns", "--udp-ns"}) {
    EXPECT_TRUE(hasSequence(argv, {option, "none"})) << option;
  }
  EXPECT_TRUE(has(argv, "--no-map-gw"));
  // relay-launcher installs the egress filter in pasta's namespace, then execs bwrap.
  EXPECT_TRUE(hasSequence(argv, {"--", "/opt/relay-launcher", "--egress",
                                 "deny 169.254.0.0/16;deny fe80::/10", "/usr/bin/bwrap"}));
  EXPECT_TRUE(has(argv, "--share-net"));  // bwrap keeps pasta's namespace
  EXPECT_EQ(argv.back(), "/app/bin/run.sh");
}

TEST(SandboxArgv, NetworkMountsAProcOfPastasPidNamespaceForBwrap) {
  InvocationSpec spec = execSpec();
  spec.network = true;
  const Argv argv = sandboxArgv(
      {}, {"/usr/bin/bwrap", true, "/usr/bin/pasta", "/opt/relay-launcher", "/usr/bin/unshare"},
      spec, kId);
  EXPECT_EQ(argv.front(), "/usr/bin/pasta");
  EXPECT_TRUE(hasSequence(
      argv, {"--", "/usr/bin/unshare", "--mount-proc", "--", "/opt/relay-launcher", "--egress"}));
}

}  // namespace
}  // namespace relay::runtime
