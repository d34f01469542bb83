// The binary-tree program must decide every call exactly as libseccomp's linear one does: both
// are run here, instruction by instruction, over every call number of every ABI the kernel
// could report, with the clone/unshare flag words that matter.
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/sandbox/seccomp_filter.h"

namespace relay::runtime {
namespace {

// What the kernel hands a filter (struct seccomp_data), built field by field.
seccomp_data callData(std::uint32_t arch, int nr, std::uint64_t arg0) {
  seccomp_data data{};
  data.nr = nr;
  data.arch = arch;
  data.args[0] = arg0;
  return data;
}

// Runs a classic BPF program the way the kernel runs a seccomp filter; nullopt for an
// instruction outside what libseccomp emits (the test then fails rather than guess).
std::optional<std::uint32_t> run(const std::string& program, const seccomp_data& data) {
  const auto* code = reinterpret_cast<const sock_filter*>(program.data());
  const std::size_t length = program.size() / sizeof(sock_filter);
  unsigned char bytes[sizeof data];
  std::memcpy(bytes, &data, sizeof data);
  std::uint32_t a = 0;
  for (std::size_t pc = 0; pc < length; ++pc) {
    const sock_filter& in = code[pc];
    switch (in.code) {
      case BPF_LD | BPF_W | BPF_ABS:
        if (in.k + 4 > sizeof bytes) return std::nullopt;
        std::memcpy(&a, bytes + in.k, 4);
        break;
      case BPF_ALU | BPF_AND | BPF_K:
        a &= in.k;
        break;
      case BPF_JMP | BPF_JA:
        pc += in.k;
        break;
      case BPF_JMP | BPF_JEQ | BPF_K:
        pc += a == in.k ? in.jt : in.jf;
        break;
      case BPF_JMP | BPF_JGT | BPF_K:
        pc += a > in.k ? in.jt : in.jf;
        break;
      case BPF_JMP | BPF_JGE | BPF_K:
        pc += a >= in.k ? in.jt : in.jf;
        break;
      case BPF_JMP | BPF_JSET | BPF_K:
        pc += (a & in.k) != 0 ? in.jt : in.jf;
        break;
      case BPF_RET | BPF_K:
        return in.k;
      default:
        return std::nullopt;
    }
  }
  return std::nullopt;  // ran off the end: the kernel would refuse such a program
}

TEST(SeccompLayout, TreeIsBuiltWhenLibseccompCanElseLinear) {
  auto tree = SeccompFilter::build();
  auto linear = SeccompFilter::build(SeccompLayout::kLinear);
  ASSERT_TRUE(tree.ok()) << tree.error().message;
  ASSERT_TRUE(linear.ok()) << linear.error().message;
  EXPECT_EQ(linear->layout(), SeccompLayout::kLinear);
  const scmp_version* version = seccomp_version();
  const bool can_tree = version->major > 2 || (version->major == 2 && version->minor >= 5);
  EXPECT_EQ(tree->layout(), can_tree ? SeccompLayout::kBinaryTree : SeccompLayout::kLinear);
  if (tree->layout() == SeccompLayout::kBinaryTree) {
    EXPECT_NE(tree->program(), linear->program());
  }
}

TEST(SeccompLayout, TreeAndLinearDecideEveryCallOfEveryAbiAlike) {
  auto tree = SeccompFilter::build();
  auto linear = SeccompFilter::build(SeccompLayout::kLinear);
  ASSERT_TRUE(tree.ok() && linear.ok());
  constexpr std::uint32_t kArches[] = {AUDIT_ARCH_X86_64, AUDIT_ARCH_I386, AUDIT_ARCH_AARCH64,
                                       AUDIT_ARCH_ARM, AUDIT_ARCH_RISCV64};
  constexpr std::uint64_t kFirstArguments[] = {
      0, CLONE_NEWUSER, CLONE_NEWNS | CLONE_FILES, CLONE_NEWNET, CLONE_NEWPID, CLONE_NEWUTS,
      CLONE_NEWIPC, CLONE_NEWCGROUP, CLONE_NEWTIME, CLONE_FILES,
      CLONE_VM | CLONE_THREAD | CLONE_SIGHAND | SIGCHLD, 0xffff'ffff'0000'0000ULL, ~0ULL,
      // socket families: allowed and denied ones
      1, 2, 10, 16, 17, 38, 40, 0x1'0000'0002ULL};
  int allowed = 0, denied = 0, killed = 0;
  for (const std::uint32_t arch : kArches) {
    for (const int x32 : {0, 0x4000'0000}) {
      for (int nr = 0; nr < 1024; ++nr) {
        for (const std::uint64_t arg0 : kFirstArguments) {
          const seccomp_data data = callData(arch, nr | x32, arg0);
          const auto by_tree = run(tree->program(), data);
          const auto by_line = run(linear->program(), data);
          ASSERT_TRUE(by_tree && by_line) << "an instruction this test does not know";
          ASSERT_EQ(*by_tree, *by_line) << "arch " << std::hex << arch << " nr " << std::dec
                                        << (nr | x32) << " arg0 " << std::hex << arg0;
          const std::uint32_t action = *by_tree & SECCOMP_RET_ACTION_FULL;
          allowed += action == SECCOMP_RET_ALLOW;
          denied += action == SECCOMP_RET_ERRNO;
          killed += action == SECCOMP_RET_KILL_PROCESS || action == SECCOMP_RET_KILL_THREAD;
        }
      }
    }
  }
  // Not vacuous: each outcome happened (other ABIs are killed, listed calls denied).
  EXPECT_GT(allowed, 0);
  EXPECT_GT(denied, 0);
  EXPECT_GT(killed, 0);
}

TEST(SeccompLayout, TreeDeniesEachListedNativeCallWithItsErrno) {
  auto tree = SeccompFilter::build();
  ASSERT_TRUE(tree.ok());
  const std::uint32_t native =
      seccomp_arch_native() == SCMP_ARCH_AARCH64 ? AUDIT_ARCH_AARCH64 : AUDIT_ARCH_X86_64;
  for (const SeccompRule& rule : SeccompFilter::rules()) {
    const int nr = seccomp_syscall_resolve_name(std::string(rule.syscall).c_str());
    if (nr < 0) continue;  // not a call of this architecture (umount on x86_64)
    const auto plain = run(tree->program(), callData(native, nr, 0));
    const auto with_user = run(tree->program(), callData(native, nr, CLONE_NEWUSER));
    ASSERT_TRUE(plain && with_user);
    const std::uint32_t refused = SECCOMP_RET_ERRNO | static_cast<std::uint32_t>(rule.error);
    EXPECT_EQ(*plain,
              rule.condition == SeccompCondition::kNamespaceFlag ? SECCOMP_RET_ALLOW : refused)
        << rule.syscall;
    EXPECT_EQ(*with_user, refused) << rule.syscall;
  }
}

// socket() is filtered on its family on every ABI that has it as a call of its own, and the
// x86 socketcall multiplexer, whose arguments sit in memory a filter cannot read, is denied
// whole (docs/runtimes.md "seccomp filter").
TEST(SeccompLayout, SocketFamiliesAreFilteredOnEveryAbi) {
  for (const SeccompLayout layout : {SeccompLayout::kBinaryTree, SeccompLayout::kLinear}) {
    auto filter = SeccompFilter::build(layout);
    ASSERT_TRUE(filter.ok()) << filter.error().message;
    // The kernel's call numbers (libseccomp names i386's socket by a pseudo number, as it
    // can also be reached through socketcall); -1: the ABI has no socketcall.
    struct Abi {
      std::uint32_t audit;
      int socket;
      int socketcall;
    };
    std::vector<Abi> abis;
    if (seccomp_arch_native() == SCMP_ARCH_X86_64) {
      abis = {{AUDIT_ARCH_X86_64, 41, -1}, {AUDIT_ARCH_I386, 359, 102}};
    } else if (seccomp_arch_native() == SCMP_ARCH_AARCH64) {
      abis = {{AUDIT_ARCH_AARCH64, 198, -1}, {AUDIT_ARCH_ARM, 281, -1}};
    }
    ASSERT_FALSE(abis.empty());
    const std::uint32_t no_family = SECCOMP_RET_ERRNO | EAFNOSUPPORT;
    for (const Abi& abi : abis) {
      const int socket = abi.socket;
      for (const std::uint64_t allowed : {1, 2, 10, 16}) {
        EXPECT_EQ(run(filter->program(), callData(abi.audit, socket, allowed)), SECCOMP_RET_ALLOW)
            << std::hex << abi.audit << " family " << std::dec << allowed;
      }
      const bool wide = abi.audit == AUDIT_ARCH_X86_64 || abi.audit == AUDIT_ARCH_AARCH64;
      for (const std::uint64_t denied :
           {0ULL, 3ULL, 15ULL, 17ULL, 38ULL, 40ULL, 44ULL, 46ULL, 0x1'0000'0002ULL, ~0ULL}) {
        // A 32-bit ABI's arguments have no upper half.
        if (!wide && denied > 0xffff'ffffULL) continue;
        EXPECT_EQ(run(filter->program(), callData(abi.audit, socket, denied)), no_family)
            << std::hex << abi.audit << " family " << denied;
      }
      const int socketcall = abi.socketcall;
      if (socketcall < 0) continue;
      for (const std::uint64_t call : {0ULL, 1ULL, 3ULL, 8ULL, 20ULL}) {
        EXPECT_EQ(run(filter->program(), callData(abi.audit, socketcall, call)),
                  SECCOMP_RET_ERRNO | ENOSYS)
            << std::hex << abi.audit << " socketcall " << std::dec << call;
      }
    }
  }
}

}  // namespace
}  // namespace relay::runtime
