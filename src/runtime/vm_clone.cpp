#include "runtime/vm_clone.h"

#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>

#if defined(__SANITIZE_ADDRESS__)
#define RELAY_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RELAY_ASAN 1
#endif
#endif
#if defined(RELAY_ASAN)
#include <sanitizer/asan_interface.h>
#endif

namespace relay::runtime {
namespace {

// The child's stack: its frames, child_setup's 4 KiB directory buffer, and room to spare.
constexpr std::size_t kStackBytes = 256 * 1024;

#if defined(__x86_64__)
// clone3 whose child calls fn(arg) on the new stack and exits with its result; the parent gets
// the raw syscall result (pid, or -errno). glibc has no clone3 wrapper, and a child returning
// from a plain syscall() on a fresh stack would have no frame to return to.
long clone3Call(clone_args* args, int (*fn)(void*), void* arg) {
  long result;
  register int (*r12)(void*) asm("r12") = fn;
  register void* r13 asm("r13") = arg;
  asm volatile(
      "syscall\n\t"
      "testq %%rax, %%rax\n\t"
      "jnz 1f\n\t"
      "xorl %%ebp, %%ebp\n\t"
      "movq %%r13, %%rdi\n\t"
      "callq *%%r12\n\t"
      "movl %%eax, %%edi\n\t"
      "movl %[exit], %%eax\n\t"
      "syscall\n\t"
      "hlt\n\t"
      "1:\n\t"
      : "=a"(result)
      : "0"(static_cast<long>(SYS_clone3)), "D"(args), "S"(sizeof(clone_args)), "r"(r12),
        "r"(r13), [exit] "i"(SYS_exit)
      : "rcx", "r11", "memory");
  return result;
}
#endif

// Blocks every signal of the calling thread for its lifetime.
class AllSignalsBlocked {
 public:
  AllSignalsBlocked() {
    sigset_t all;
    sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &old_);
  }
  ~AllSignalsBlocked() { ::pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
  AllSignalsBlocked(const AllSignalsBlocked&) = delete;
  AllSignalsBlocked& operator=(const AllSignalsBlocked&) = delete;

 private:
  sigset_t old_{};
};

// An anonymous mapping for the children's stacks, one per thread that starts children, kept for
// the thread's lifetime: the parent resumes only once its child has exec'd or exited
// (CLONE_VFORK), so the next child may reuse it. Mapping and unmapping it per start cost an
// munmap with a TLB shootdown on every core running one of Relay's threads.
class Stack {
 public:
  Stack() = default;
  ~Stack() {
    if (base_ != MAP_FAILED) ::munmap(base_, kStackBytes);
  }
  Stack(const Stack&) = delete;
  Stack& operator=(const Stack&) = delete;

  /// Maps the stack on first use (again after a failed attempt); false when it cannot.
  bool ready() {
    if (base_ == MAP_FAILED) {
      base_ = ::mmap(nullptr, kStackBytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    }
#if defined(RELAY_ASAN)
    // The last child exec'd or exited without returning, so AddressSanitizer's shadow of this
    // memory still holds its frames' redzones; the next child must start on a clean stack.
    if (base_ != MAP_FAILED) ASAN_UNPOISON_MEMORY_REGION(base_, kStackBytes);
#endif
    return base_ != MAP_FAILED;
  }
  void* base() const { return base_; }
  void* top() const { return static_cast<char*>(base_) + kStackBytes; }

 private:
  void* base_ = MAP_FAILED;
};

}  // namespace

VmClone cloneVm(int (*child)(void*), void* arg, int cgroup_fd, bool* started_in_cgroup) {
  const auto tell = [started_in_cgroup](bool value) {
    if (started_in_cgroup != nullptr) *started_in_cgroup = value;
  };
  thread_local Stack stack;
  if (!stack.ready()) return {};
  const AllSignalsBlocked blocked;
#if defined(__x86_64__)
  if (cgroup_fd >= 0) {
    clone_args args{};
    args.flags = CLONE_VM | CLONE_VFORK | CLONE_INTO_CGROUP;
    args.exit_signal = SIGCHLD;
    args.stack = reinterpret_cast<std::uint64_t>(stack.base());
    args.stack_size = kStackBytes;
    args.cgroup = static_cast<std::uint64_t>(cgroup_fd);
    tell(true);
    const long pid = clone3Call(&args, child, arg);
    if (pid > 0) return {static_cast<pid_t>(pid), true};
    // ENOSYS (no clone3), E2BIG/EINVAL (no CLONE_INTO_CGROUP), EOPNOTSUPP (not a v2 cgroup...):
    // the child joins by itself instead.
  }
#else
  (void)cgroup_fd;
#endif
  tell(false);
  const int pid = ::clone(child, stack.top(), CLONE_VM | CLONE_VFORK | SIGCHLD, arg);
  return {pid, false};
}

}  // namespace relay::runtime
