#include "runtime/child_setup.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <linux/keyctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>

namespace relay::runtime::child_setup {
namespace {

// The kernel's record for getdents64 (glibc exposes no async-signal-safe directory reader).
struct LinuxDirent64 {
  std::uint64_t d_ino;
  std::int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[1];
};

bool setCloexec(int fd) {
  const int flags = ::fcntl(fd, F_GETFD);
  if (flags < 0) return errno == EBADF;  // closed meanwhile: nothing to protect
  return (flags & FD_CLOEXEC) != 0 || ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC) == 0;
}

// The descriptor number a /proc/self/fd entry names; -1 for `.` and `..`.
int parseFd(const char* name) {
  if (*name == '\0') return -1;
  int value = 0;
  for (; *name != '\0'; ++name) {
    if (*name < '0' || *name > '9') return -1;
    value = value * 10 + (*name - '0');
  }
  return value;
}

bool viaProcSelfFd(int first) {
  const int dir = ::open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return false;
  alignas(LinuxDirent64) char buffer[4096];
  bool ok = true;
  while (true) {
    const long got = ::syscall(SYS_getdents64, dir, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      ok = got == 0;
      break;
    }
    for (long at = 0; at < got;) {
      const auto* entry = reinterpret_cast<const LinuxDirent64*>(buffer + at);
      at += entry->d_reclen;
      const int fd = parseFd(entry->d_name);
      if (fd >= first && fd != dir && !setCloexec(fd)) ok = false;
    }
  }
  const int saved = errno;
  ::close(dir);
  errno = saved;
  return ok;
}

bool viaRlimitScan(int first) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return false;
  // An unlimited or huge limit would take long to scan; the kernel caps open fds at nr_open
  // (default 1 Mi) anyway.
  const rlim_t end = limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur > (1U << 20)
                         ? rlim_t{1U << 20}
                         : limit.rlim_cur;
  bool ok = true;
  for (rlim_t fd = static_cast<rlim_t>(first); fd < end; ++fd) {
    if (!setCloexec(static_cast<int>(fd))) ok = false;
  }
  return ok;
}

}  // namespace

bool markCloexecFrom(int first, CloexecMethod method) {
  switch (method) {
    case CloexecMethod::kCloseRange:
      return ::syscall(SYS_close_range, static_cast<unsigned>(first), ~0U, CLOSE_RANGE_CLOEXEC) ==
             0;
    case CloexecMethod::kProcSelfFd:
      return viaProcSelfFd(first);
    case CloexecMethod::kRlimitScan:
      return viaRlimitScan(first);
  }
  errno = EINVAL;
  return false;
}

bool markCloexecFrom(int first) {
  return markCloexecFrom(first, CloexecMethod::kCloseRange) ||
         markCloexecFrom(first, CloexecMethod::kProcSelfFd) ||
         markCloexecFrom(first, CloexecMethod::kRlimitScan);
}

bool joinFreshSessionKeyring() {
  // A null name asks for a new anonymous keyring; it dies with the last process holding it.
  if (::syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, static_cast<const char*>(nullptr)) >= 0)
    return true;
  return errno == ENOSYS;
}

bool installFds(const int* sources, int* scratch, int count) {
  // First copy every source above the targets, so no dup2 below overwrites a pending source.
  for (int i = 0; i < count; ++i) {
    scratch[i] = ::fcntl(sources[i], F_DUPFD_CLOEXEC, count);
    if (scratch[i] < 0) return false;
  }
  for (int i = 0; i < count; ++i) {
    if (::dup2(scratch[i], i) != i) return false;
    ::close(scratch[i]);
  }
  return true;
}

}  // namespace relay::runtime::child_setup
