// The hostile-handler suite (issue 12, docs/runtimes.md "What every backend guarantees"): each
// escape a hostile app author tried against `relay start` on the sandbox runtime, asserted to
// fail. Relay talks to a redis-server with requirepass, so a leaked connection would be an
// authenticated one.
#include <linux/keyctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <sstream>

#include "integration/hostile/hostile_fixture.h"

namespace relay::testing {
namespace {

TEST_F(HostileHandler, SeesOnlyDescriptorsZeroToTwoAndNoRedisConnection) {
  addApp("hostile", {"fds"});
  startRelay();
  const auto lines = attempt("hostile", "fds", R"({"attempt":"fds"})");
  expectOnlyStandardDescriptors(lines);
  expectAllBlocked(lines, 0);
}

TEST_F(HostileHandler, CannotReachRedisOverTheNetworkWithoutNetwork) {
  addApp("hostile", {"redis_tcp"});
  startRelay();
  const auto lines = attempt(
      "hostile", "redis_tcp",
      R"({"attempt":"redis_tcp","host":"127.0.0.1","port":)" + std::to_string(port()) + "}");
  expectAllBlocked(lines, 1);
}

TEST_F(HostileHandler, WithNetworkCannotReachRedisOrTheHostsLoopbackEither) {
  addApp("hostile-net", {"redis_tcp", "fds"}, "network: true\n");
  startRelay();
  const auto lines = attempt(
      "hostile-net", "redis_tcp",
      R"({"attempt":"redis_tcp","host":"127.0.0.1","port":)" + std::to_string(port()) + "}");
  // 127.0.0.1, ::1 and the IPv4 and IPv6 gateways pasta gives the namespace.
  expectAllBlocked(lines, 4);
  expectOnlyStandardDescriptors(attempt("hostile-net", "fds", R"({"attempt":"fds"})"));
}

TEST_F(HostileHandler, CannotReadAnotherAppsKeyOrRelaysOwnSessionKeyring) {
  // Relay runs in a session keyring holding a key of its own, as under systemd or runc.
  ASSERT_GE(::syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, "relay-hostile-test"), 0);
  const char secret[] = "relay-own-secret-value";
  ASSERT_GT(::syscall(SYS_add_key, "user", "relay-own-secret", secret, sizeof secret - 1,
                      KEY_SPEC_SESSION_KEYRING),
            0);
  addApp("alpha", {"keyring_store"});
  addApp("beta", {"keyring_read"});
  startRelay();
  const auto stored = attempt("alpha", "keyring_store", R"({"attempt":"keyring_store"})");
  std::string serials;
  for (const std::string& line : stored) {
    if (line.rfind("SERIAL ", 0) == 0) serials += (serials.empty() ? "" : ",") + line.substr(7);
  }
  const auto read =
      attempt("beta", "keyring_read", R"({"attempt":"keyring_read","serials":[)" + serials + "]}");
  expectAllBlocked(read, 5);
  EXPECT_EQ(log().find("relay-own-secret-value"), std::string::npos) << log();
  EXPECT_EQ(log().find("from-app-a"), std::string::npos) << log();
}

TEST_F(HostileHandler, CannotCreateAUserNamespaceOrMount) {
  addApp("hostile", {"namespaces"});
  startRelay();
  const auto lines = attempt("hostile", "namespaces", R"({"attempt":"namespaces"})");
  expectAllBlocked(lines, 4);
}

TEST_F(HostileHandler, CannotUseIoUringUserfaultfdBpfOrPerf) {
  addApp("hostile", {"kernel_interfaces"});
  startRelay();
  const auto lines = attempt("hostile", "kernel_interfaces", R"({"attempt":"kernel_interfaces"})");
  expectAllBlocked(lines, 4);
  // Seccomp mode 2: a filter is installed.
  EXPECT_NE(joined(lines).find("Seccomp:\t2"), std::string::npos) << joined(lines);
}

TEST_F(HostileHandler, CannotWriteOutsideTmpNorPastItsCap) {
  addApp("hostile", {"write_outside_tmp"});
  startRelay();
  const auto lines =
      attempt("hostile", "write_outside_tmp", R"({"attempt":"write_outside_tmp","mib":100})");
  expectAllBlocked(lines, 10);
}

TEST_F(HostileHandler, CannotForkPastItsPidsLimit) {
  addApp("hostile", {"pids_limit"}, "resources: {pids: 32}\n");
  startRelay();
  const auto lines = attempt("hostile", "pids_limit", R"({"attempt":"pids_limit","tries":200})");
  expectAllBlocked(lines, 1);
  EXPECT_NE(joined(lines).find("then EAGAIN"), std::string::npos) << joined(lines);
}

TEST_F(HostileHandler, CannotUseMoreMemoryThanItsLimit) {
  addApp("hostile", {"memory_limit"}, "resources: {memory: 64MiB}\n");
  startRelay();
  const auto lines = attempt("hostile", "memory_limit", R"({"attempt":"memory_limit","mib":512})");
  expectAllBlocked(lines, 1);
  // The kernel's OOM killer ended the child inside the invocation's cgroup, well below 512 MiB.
  EXPECT_NE(joined(lines).find("killed by signal 9"), std::string::npos) << joined(lines);
}

TEST_F(HostileHandler, CannotForgeAPrefixInTextLogs) {
  addApp("hostile", {"forge_log"});
  startRelay();
  const auto lines = attempt("hostile", "forge_log", R"({"attempt":"forge_log"})");
  ASSERT_GE(lines.size(), 3u) << log();
  const std::string text = log();
  for (const char control : {'\r', '\x1b', '\x7f'}) {
    EXPECT_EQ(text.find(control), std::string::npos) << "raw control byte in the log:\n" << text;
  }
  EXPECT_EQ(text.find("\xc2\x9b"), std::string::npos) << text;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find("forged") != std::string::npos || line.find("overwritten") != std::string::npos) {
      EXPECT_EQ(line.rfind("[hostile/hostile.forge_log] ", 0), 0U) << line;
    }
  }
  EXPECT_NE(text.find("[hostile/hostile.forge_log] innocent\\x0D[other/app] forged line"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace relay::testing
