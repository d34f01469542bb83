#include "runtime/sandbox/seccomp_filter.h"

#include <linux/filter.h>
#include <linux/keyctl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

namespace relay::runtime {
namespace {

// Runs `probe` in a forked child under the filter and returns the child's exit code (100+ when
// the filter could not be installed, 200+ for a signal).
int underFilter(const std::function<int()>& probe) {
  auto filter = SeccompFilter::build();
  if (!filter.ok()) {
    ADD_FAILURE() << filter.error().message;
    return -1;
  }
  const std::string& program = filter->program();
  const pid_t pid = ::fork();
  if (pid == 0) {
    sock_fprog fprog{static_cast<unsigned short>(program.size() / sizeof(sock_filter)),
                     reinterpret_cast<sock_filter*>(const_cast<char*>(program.data()))};
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) ::_exit(100);
    if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fprog) != 0) ::_exit(101);
    // Guard: nothing below may run unfiltered (the test runs as root).
    errno = 0;
    if (::syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0) != -1 ||
        errno != EPERM) {
      ::_exit(102);
    }
    ::_exit(probe());
  }
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -2;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 200 + WTERMSIG(status);
}

// 0 when the call failed with `expected`, 1 when it succeeded, 2 on another errno.
int failsWith(long result, int expected) {
  if (result != -1) return 1;
  return errno == expected ? 0 : 2;
}

TEST(SeccompFilter, DocsListEveryDeniedCall) {
  std::ifstream file(RELAY_DOCS_DIR "/runtimes.md");
  std::stringstream text;
  text << file.rdbuf();
  const std::string docs = text.str();
  const std::size_t section = docs.find("### seccomp filter");
  ASSERT_NE(section, std::string::npos);
  const std::string list = docs.substr(section, docs.find("\n#", section + 1) - section);
  for (const SeccompRule& rule : SeccompFilter::rules()) {
    EXPECT_NE(list.find("`" + std::string(rule.syscall) + "`"), std::string::npos)
        << rule.syscall << " is denied but docs/runtimes.md does not list it";
  }
}

TEST(SeccompFilter, BuildsANonEmptyProgramOfWholeInstructions) {
  auto filter = SeccompFilter::build();
  ASSERT_TRUE(filter.ok()) << filter.error().message;
  EXPECT_FALSE(filter->program().empty());
  EXPECT_EQ(filter->program().size() % sizeof(sock_filter), 0U);
}

TEST(SeccompFilter, OpenProgramGivesAFreshDescriptorAtTheStartEachTime) {
  auto filter = SeccompFilter::build();
  ASSERT_TRUE(filter.ok());
  for (int round = 0; round < 2; ++round) {
    auto fd = filter->openProgram();
    ASSERT_TRUE(fd.ok()) << fd.error().message;
    std::string read_back(filter->program().size() + 16, '\0');
    const ssize_t n = ::read(fd->get(), read_back.data(), read_back.size());
    ASSERT_EQ(n, static_cast<ssize_t>(filter->program().size()));
    read_back.resize(static_cast<std::size_t>(n));
    EXPECT_EQ(read_back, filter->program());
  }
}

TEST(SeccompFilter, DeniesEveryListedCallWithItsErrno) {
  EXPECT_EQ(underFilter([] {
              int code = 10;
              for (const SeccompRule& rule : SeccompFilter::rules()) {
                ++code;
                // vhangup would hang up the test's terminal if it got through; clone and
                // clone3 have tests of their own.
                if (rule.condition != SeccompCondition::kAlways || rule.syscall == "vhangup") {
                  continue;
                }
                const int number = seccomp_syscall_resolve_name(std::string(rule.syscall).c_str());
                if (number < 0) continue;  // not a call of this architecture (umount on x86_64)
                errno = 0;
                const long result = ::syscall(number, 0, 0, 0, 0, 0, 0);
                if (result != -1 || errno != rule.error) return code;
              }
              return 0;
            }),
            0);
}

TEST(SeccompFilter, DeniesUserAndOtherNamespacesButNotPlainUnshare) {
  EXPECT_EQ(underFilter([] { return failsWith(::unshare(CLONE_NEWUSER), EPERM); }), 0);
  EXPECT_EQ(underFilter([] { return failsWith(::unshare(CLONE_NEWNS | CLONE_FILES), EPERM); }), 0);
  EXPECT_EQ(underFilter([] { return failsWith(::unshare(CLONE_NEWNET), EPERM); }), 0);
  EXPECT_EQ(underFilter([] { return ::unshare(CLONE_FILES) == 0 ? 0 : 1; }), 0);
}

TEST(SeccompFilter, DeniesCloneIntoANewUserNamespace) {
  EXPECT_EQ(underFilter([] {
              const long pid = ::syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
              if (pid == 0) ::_exit(0);  // got through: the parent reports it
              return failsWith(pid, EPERM);
            }),
            0);
}

TEST(SeccompFilter, Clone3IsENOSYSSoForkAndThreadsFallBackToClone) {
  EXPECT_EQ(underFilter([] { return failsWith(::syscall(SYS_clone3, nullptr, 0), ENOSYS); }), 0);
  EXPECT_EQ(underFilter([] {
              const pid_t child = ::fork();
              if (child == 0) ::_exit(7);
              int status = 0;
              if (child < 0 || ::waitpid(child, &status, 0) != child) return 1;
              bool ran = false;
              std::thread([&ran] { ran = true; }).join();
              return WIFEXITED(status) && WEXITSTATUS(status) == 7 && ran ? 0 : 2;
            }),
            0);
}

// Families a network namespace does not confine (AF_VSOCK reaches the hypervisor) or that
// open kernel code most handlers never need (AF_ALG, AF_PACKET, AF_XDP...): only AF_UNIX,
// AF_INET, AF_INET6 and AF_NETLINK are created (docs/runtimes.md "seccomp filter").
TEST(SeccompFilter, CreatesOnlyUnixInetInet6AndNetlinkSockets) {
  EXPECT_EQ(underFilter([] {
              int code = 10;
              for (const int family : {AF_UNIX, AF_INET, AF_INET6, AF_NETLINK}) {
                ++code;
                const int fd = ::socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
                if (fd < 0) return code;
                ::close(fd);
              }
              int pair[2];
              if (::socketpair(AF_UNIX, SOCK_STREAM, 0, pair) != 0) return 20;
              return 0;
            }),
            0);
  EXPECT_EQ(
      underFilter([] {
        int code = 30;
        // AF_UNSPEC, the unused 3..9 and 11..15 (AF_KEY among them), AF_PACKET, AF_ALG,
        // AF_VSOCK, AF_XDP, past AF_MAX, and values whose low 32 bits name an allowed
        // family but the register holds more.
        for (const long family : {0L,  3L,  4L,  5L,  6L,  7L,  8L,  9L,   11L, 12L,
                                  13L, 14L, 15L, 17L, 38L, 40L, 44L, 255L, -1L, 0x1'0000'0002L}) {
          ++code;
          errno = 0;
          const long fd = ::syscall(SYS_socket, family, SOCK_STREAM, 0);
          if (fd >= 0 || errno != EAFNOSUPPORT) return code;
        }
        return 0;
      }),
      0);
}

TEST(SeccompFilter, MountIsDeniedBeforeTheKernelLooksAtItsArguments) {
  // Unfiltered, root would get ENOENT for the missing target.
  EXPECT_EQ(underFilter([] {
              return failsWith(::mount("none", "/nonexistent-relay-target", "tmpfs", 0, nullptr),
                               EPERM);
            }),
            0);
}

}  // namespace
}  // namespace relay::runtime
