#include "runtime/sandbox/seccomp_filter.h"

#include <sched.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/c_free.h"

namespace relay::runtime {
namespace {

using FilterContext = std::unique_ptr<void, CFree<seccomp_release>>;

// Namespace flags of clone(2); CLONE_NEWTIME is left out there because clone's low byte is
// the exit signal (a time namespace needs unshare or clone3, both covered).
constexpr unsigned long kCloneNamespaceFlags[] = {CLONE_NEWUSER,  CLONE_NEWNS,  CLONE_NEWNET,
                                                  CLONE_NEWPID,   CLONE_NEWUTS, CLONE_NEWIPC,
                                                  CLONE_NEWCGROUP};

std::string libseccompError(const std::string& what, int rc) {
  return "cannot build the seccomp filter: " + what + ": " + std::strerror(-rc);
}

// Denies `syscall` when its first argument has any of `flags` (one rule per flag; rules of one
// call are OR-ed). The flags are the first argument of clone and unshare on x86 and arm.
int denyWithFlags(scmp_filter_ctx ctx, int number, const unsigned long* flags, std::size_t count,
                  int error) {
  for (std::size_t i = 0; i < count; ++i) {
    const int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(error), number, 1,
                                    SCMP_A0(SCMP_CMP_MASKED_EQ, flags[i], flags[i]));
    if (rc != 0) return rc;
  }
  return 0;
}

// Denies socket() for every family but AF_UNIX (1), AF_INET (2), AF_INET6 (10) and AF_NETLINK
// (16): rules of one call are OR-ed, so one per gap (0, 3-9, 11-15) and one above 16, on the
// whole register (a value whose low 32 bits name an allowed family but that holds more is
// denied too).
int denyOtherSocketFamilies(scmp_filter_ctx ctx, int number, int error) {
  static_assert(AF_UNIX == 1 && AF_INET == 2 && AF_INET6 == 10 && AF_NETLINK == 16);
  for (const unsigned long family :
       {0UL, 3UL, 4UL, 5UL, 6UL, 7UL, 8UL, 9UL, 11UL, 12UL, 13UL, 14UL, 15UL}) {
    const int rc =
        seccomp_rule_add(ctx, SCMP_ACT_ERRNO(error), number, 1, SCMP_A0(SCMP_CMP_EQ, family));
    if (rc != 0) return rc;
  }
  return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(error), number, 1,
                          SCMP_A0(SCMP_CMP_GT, static_cast<unsigned long>(AF_NETLINK)));
}

// Asks libseccomp for a binary tree over the call numbers; the linear layout when it cannot
// (before 2.5 the attribute does not exist, and a library older than its header refuses it).
SeccompLayout chooseLayout(scmp_filter_ctx ctx, SeccompLayout wanted) {
  if (wanted == SeccompLayout::kLinear) return SeccompLayout::kLinear;
#if defined(SCMP_VER_MAJOR) && (SCMP_VER_MAJOR > 2 || (SCMP_VER_MAJOR == 2 && SCMP_VER_MINOR >= 5))
  if (seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2) == 0) return SeccompLayout::kBinaryTree;
#else
  (void)ctx;
#endif
  return SeccompLayout::kLinear;
}

}  // namespace

const std::vector<SeccompRule>& SeccompFilter::rules() {
  static const std::vector<SeccompRule> kRules = {
      // New namespaces, above all user namespaces: the door to mount, chroot and cgroupfs.
      {"unshare", EPERM, SeccompCondition::kNamespaceFlag},
      {"clone", EPERM, SeccompCondition::kNamespaceFlag},
      // Its flags sit in memory a filter cannot read: ENOSYS makes libc fall back to clone.
      {"clone3", ENOSYS},
      {"setns", EPERM},
      // Mounting and changing the root.
      {"mount", EPERM},
      {"umount2", EPERM},
      {"umount", EPERM},
      {"pivot_root", EPERM},
      {"chroot", EPERM},
      {"move_mount", EPERM},
      {"open_tree", EPERM},
      {"fsopen", EPERM},
      {"fsmount", EPERM},
      {"fsconfig", EPERM},
      {"fspick", EPERM},
      {"mount_setattr", EPERM},
      // Kernel keyrings: a channel between invocations and a way into Relay's keys.
      {"keyctl", EPERM},
      {"add_key", EPERM},
      {"request_key", EPERM},
      // Interfaces behind most recent kernel exploits.
      {"io_uring_setup", EPERM},
      {"io_uring_enter", EPERM},
      {"io_uring_register", EPERM},
      {"userfaultfd", EPERM},
      {"bpf", EPERM},
      {"perf_event_open", EPERM},
      // Socket families: AF_VSOCK is not confined by a network namespace (it reaches the
      // host or hypervisor), and the rest (AF_ALG, AF_PACKET, AF_XDP...) are kernel code a
      // handler has no use for. socketcall, x86's multiplexer, hides the family in memory a
      // filter cannot read: denied whole, as if the kernel lacked it.
      {"socket", EAFNOSUPPORT, SeccompCondition::kOtherSocketFamily},
      {"socketcall", ENOSYS},
      // Inspecting or driving other processes.
      {"ptrace", EPERM},
      {"process_vm_readv", EPERM},
      {"process_vm_writev", EPERM},
      {"kcmp", EPERM},
      {"pidfd_getfd", EPERM},
      // Kernels and modules.
      {"kexec_load", EPERM},
      {"kexec_file_load", EPERM},
      {"init_module", EPERM},
      {"finit_module", EPERM},
      {"delete_module", EPERM},
      // What a container runtime's default profile also denies (most need a capability the
      // handler lacks anyway; denied so a kernel bug in the check does not matter).
      {"open_by_handle_at", EPERM},
      {"acct", EPERM},
      {"swapon", EPERM},
      {"swapoff", EPERM},
      {"reboot", EPERM},
      {"syslog", EPERM},
      {"quotactl", EPERM},
      {"lookup_dcookie", EPERM},
      {"settimeofday", EPERM},
      {"clock_settime", EPERM},
      {"clock_adjtime", EPERM},
      {"fanotify_init", EPERM},
      {"vhangup", EPERM},
      {"iopl", EPERM},
      {"ioperm", EPERM},
      {"modify_ldt", EPERM},
      {"uselib", EPERM},
      {"ustat", EPERM},
      {"sysfs", EPERM},
  };
  return kRules;
}

Result<SeccompFilter> SeccompFilter::build(SeccompLayout wanted) {
  const FilterContext ctx(seccomp_init(SCMP_ACT_ALLOW));
  if (!ctx) return Error::unavailable("cannot build the seccomp filter: seccomp_init failed");
  const SeccompLayout layout = chooseLayout(ctx.get(), wanted);
  // The compat ABIs of the native architecture get the same rules; any other ABI is killed
  // (libseccomp's default for an architecture the filter does not list).
  std::vector<std::uint32_t> extra;
  if (seccomp_arch_native() == SCMP_ARCH_X86_64) extra = {SCMP_ARCH_X86, SCMP_ARCH_X32};
  if (seccomp_arch_native() == SCMP_ARCH_AARCH64) extra = {SCMP_ARCH_ARM};
  for (const std::uint32_t arch : extra) {
    const int rc = seccomp_arch_add(ctx.get(), arch);
    if (rc != 0 && rc != -EEXIST) return Error::unavailable(libseccompError("adding an ABI", rc));
  }
  for (const SeccompRule& rule : rules()) {
    const std::string name(rule.syscall);
    const int number = seccomp_syscall_resolve_name(name.c_str());
    if (number == __NR_SCMP_ERROR) {
      return Error::unavailable("cannot build the seccomp filter: libseccomp does not know " +
                                name + " (too old?)");
    }
    int rc = 0;
    if (rule.condition == SeccompCondition::kAlways) {
      rc = seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(rule.error), number, 0);
    } else if (rule.condition == SeccompCondition::kOtherSocketFamily) {
      rc = denyOtherSocketFamilies(ctx.get(), number, rule.error);
    } else if (name == "clone") {
      rc = denyWithFlags(ctx.get(), number, kCloneNamespaceFlags, std::size(kCloneNamespaceFlags),
                         rule.error);
    } else {
      constexpr unsigned long kUnshareFlags[] = {CLONE_NEWUSER,   CLONE_NEWNS,  CLONE_NEWNET,
                                                 CLONE_NEWPID,    CLONE_NEWUTS, CLONE_NEWIPC,
                                                 CLONE_NEWCGROUP, CLONE_NEWTIME};
      rc = denyWithFlags(ctx.get(), number, kUnshareFlags, std::size(kUnshareFlags), rule.error);
    }
    if (rc != 0) return Error::unavailable(libseccompError("denying " + name, rc));
  }
  // Export through a memfd: libseccomp 2.5 writes the program to a descriptor only.
  const UniqueFd memory(::memfd_create("relay-seccomp", MFD_CLOEXEC));
  if (!memory.valid()) {
    return Error::unavailable(std::string("cannot build the seccomp filter: memfd_create: ") +
                              std::strerror(errno));
  }
  if (const int rc = seccomp_export_bpf(ctx.get(), memory.get()); rc != 0) {
    return Error::unavailable(libseccompError("exporting the program", rc));
  }
  std::string program;
  char buffer[4096];
  for (off_t at = 0;;) {
    const ssize_t n = ::pread(memory.get(), buffer, sizeof buffer, at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return Error::unavailable(std::string("cannot build the seccomp filter: reading it: ") +
                                std::strerror(errno));
    }
    if (n == 0) break;
    program.append(buffer, static_cast<std::size_t>(n));
    at += n;
  }
  if (program.empty()) return Error::unavailable("cannot build the seccomp filter: it is empty");
  return SeccompFilter(std::move(program), layout);
}

Result<UniqueFd> SeccompFilter::openProgram() const {
  UniqueFd memory(::memfd_create("relay-seccomp", MFD_CLOEXEC));
  if (!memory.valid()) return Error::io(std::string("memfd_create: ") + std::strerror(errno));
  std::string_view rest = program_;
  while (!rest.empty()) {
    const ssize_t n = ::write(memory.get(), rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      return Error::io(std::string("writing the seccomp program: ") + std::strerror(errno));
    rest.remove_prefix(static_cast<std::size_t>(n));
  }
  if (::lseek(memory.get(), 0, SEEK_SET) != 0) {
    return Error::io(std::string("lseek: ") + std::strerror(errno));
  }
  return memory;
}

}  // namespace relay::runtime
