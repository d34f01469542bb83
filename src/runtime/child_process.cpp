#include "runtime/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include "common/duration.h"
#include "common/sigpipe_guard.h"
#include "runtime/child_setup.h"
#include "runtime/vm_clone.h"

namespace relay::runtime {
namespace {

std::string errnoText(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

/// Both ends of a close-on-exec pipe.
struct Pipe {
  UniqueFd read;
  UniqueFd write;
};

Result<Pipe> makePipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Error::io(errnoText("pipe2"));
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

// What the child needs, all prepared before the clone.
struct ChildPlan {
  const LaunchOptions& options;
  char* const* argv;
  char* const* envp;
  const int* fds;  // stdin, stdout, stderr, then options.inherited_fds: become 0, 1, 2, 3...
  int* scratch;    // as many slots as fds
  int fd_count;
  pid_t parent;
  bool started_in_cgroup;  // set by cloneVm just before each attempt
  // Written by a child that fails before exec (it shares Relay's memory until then; the parent
  // reads them once cloneVm returns, after the child exec'd or exited): the step and its errno.
  int failed_step;
  int failed_errno;
};

// Child side after cloneVm: it runs on Relay's memory until execve, so only async-signal-safe,
// allocation-free calls, and credentials change through raw syscalls (glibc's setresuid would
// broadcast to Relay's other threads). Records a failing step and its errno in the plan and exits
// 127.
[[noreturn]] void runChild(ChildPlan& plan) {
  const LaunchOptions& options = plan.options;
  const auto fail = [&plan](int step) {
    plan.failed_errno = errno;
    plan.failed_step = step;
    _exit(127);
  };
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) fail(1);
  if (::getppid() != plan.parent) _exit(127);  // the parent died before prctl
  if (!child_setup::installFds(plan.fds, plan.scratch, plan.fd_count)) fail(2);
  if (::setsid() < 0) fail(3);
  // With Relay's credentials, before dropping privileges: the keyring is charged to Relay's key
  // quota, not to the sandbox user's small one that every concurrent invocation shares.
  if (!child_setup::joinFreshSessionKeyring()) fail(10);
  for (const std::string& file : options.cgroup_procs_files) {
    if (plan.started_in_cgroup) break;
    const int fd = ::open(file.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0 || ::write(fd, "0", 1) != 1) fail(4);
    ::close(fd);
  }
  if (!options.cwd.empty() && ::chdir(options.cwd.c_str()) != 0) fail(5);
  if (options.gid && (::syscall(SYS_setgroups, 0, nullptr) != 0 ||
                      ::syscall(SYS_setresgid, *options.gid, *options.gid, *options.gid) != 0)) {
    fail(6);
  }
  if (options.uid && ::syscall(SYS_setresuid, *options.uid, *options.uid, *options.uid) != 0) {
    fail(7);
  }
  if (options.no_new_privs && ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail(8);
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &default_action, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  // Last: only stdin, stdout, stderr and the inherited descriptors reach the program.
  if (!child_setup::markCloexecFrom(plan.fd_count)) fail(11);
  ::execve(options.executable.c_str(), plan.argv, plan.envp);
  fail(9);
  _exit(127);  // not reached: fail() exits
}

int childEntry(void* plan) { runChild(*static_cast<ChildPlan*>(plan)); }

const char* childStepName(int step) {
  switch (step) {
    case 1:
    case 3:
      return "setting up the session";
    case 2:
      return "installing stdio and inherited descriptors";
    case 4:
      return "joining the invocation cgroup";
    case 5:
      return "changing directory";
    case 6:
    case 7:
      return "dropping privileges";
    case 8:
      return "setting no_new_privs";
    case 10:
      return "creating a fresh session keyring";
    case 11:
      return "marking inherited descriptors close-on-exec";
    default:
      return "executing";
  }
}

}  // namespace

Result<std::unique_ptr<ChildProcess>> ChildProcess::spawn(const LaunchOptions& options) {
  // Everything the child needs is built before the clone: after it only async-signal-safe calls.
  std::vector<char*> argv;
  for (const std::string& arg : options.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const std::string& var : options.env) envp.push_back(const_cast<char*>(var.c_str()));
  envp.push_back(nullptr);

  auto in = makePipe();
  if (!in) return in.error();
  auto out = makePipe();
  if (!out) return out.error();
  auto err = makePipe();
  if (!err) return err.error();
  std::vector<int> fds = {in->read.get(), out->write.get(), err->write.get()};
  fds.insert(fds.end(), options.inherited_fds.begin(), options.inherited_fds.end());
  std::vector<int> scratch(fds.size(), -1);
  ChildPlan plan{options,    argv.data(),    envp.data(),
                 fds.data(), scratch.data(), static_cast<int>(fds.size()),
                 ::getpid(), false,          0,
                 0};
  const pid_t pid = cloneVm(childEntry, &plan, options.cgroup_fd, &plan.started_in_cgroup).pid;
  if (pid < 0) return Error::unavailable(errnoText("clone"));

  std::unique_ptr<ChildProcess> child(new ChildProcess());
  child->pid_ = pid;
  child->pidfd_.reset(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  in->read.reset();
  out->write.reset();
  err->write.reset();
  child->stdin_fd_ = std::move(in->write);
  child->stdout_fd_ = std::move(out->read);
  child->stderr_fd_ = std::move(err->read);
  if (plan.failed_step != 0) {
    // The child failed before exec; the destructor reaps it.
    return Error::unavailable("cannot start " + options.executable + ": " +
                              childStepName(plan.failed_step) +
                              " failed: " + std::strerror(plan.failed_errno));
  }
  if (!child->pidfd_.valid()) return Error::io(errnoText("pidfd_open"));
  return child;
}

ChildProcess::~ChildProcess() {
  if (!reaped_ && pid_ > 0) {
    signalGroup(SIGKILL);
    ::kill(pid_, SIGKILL);
    (void)reap();
  }
}

bool ChildProcess::ended() const {
  if (reaped_) return true;
  pollfd exited{pidfd_.get(), POLLIN, 0};
  return ::poll(&exited, 1, 0) != 0;  // readable once it exits; an error counts as gone
}

void ChildProcess::signalGroup(int signal) const {
  if (pid_ > 0) ::kill(-pid_, signal);
}

Result<ChildProcess::Termination> ChildProcess::reap() {
  int wstatus = 0;
  pid_t result;
  do {
    result = ::waitpid(pid_, &wstatus, 0);
  } while (result < 0 && errno == EINTR);
  reaped_ = true;
  if (result < 0) return Error::io(errnoText("waitpid"));
  Termination termination;
  if (WIFEXITED(wstatus)) {
    termination.exited = true;
    termination.code = WEXITSTATUS(wstatus);
  } else if (WIFSIGNALED(wstatus)) {
    termination.signal = WTERMSIG(wstatus);
  }
  return termination;
}

Result<ChildProcess::Termination> ChildProcess::supervise(
    std::string_view input, LineSplitter& out, LineSplitter& err, Clock& clock,
    std::chrono::milliseconds timeout, const std::function<void(int)>& signal_tree,
    const SideChannel* side, const CancelSignal* cancel) {
  using std::chrono::milliseconds;
  // A handler that ignores stdin makes the write fail with EPIPE instead of killing Relay.
  const SigpipeGuard no_sigpipe;
  for (const UniqueFd* fd : {&stdin_fd_, &stdout_fd_, &stderr_fd_}) {
    ::fcntl(fd->get(), F_SETFL, ::fcntl(fd->get(), F_GETFL) | O_NONBLOCK);
  }
  int side_fd = side != nullptr ? side->fd : -1;
  if (side_fd >= 0) ::fcntl(side_fd, F_SETFL, ::fcntl(side_fd, F_GETFL) | O_NONBLOCK);
  std::array<char, 64 * 1024> buffer;      // not zeroed: 64 KiB of memset per invocation otherwise
  std::array<char, 4 * 1024> side_buffer;  // the side channel's: read while `buffer` holds output
  // One read of the side channel; at EOF or an error it is watched no more.
  const auto readSide = [&] {
    const ssize_t n = ::read(side_fd, side_buffer.data(), side_buffer.size());
    if (n > 0) {
      side->on_data({side_buffer.data(), static_cast<std::size_t>(n)});
    } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
      side_fd = -1;
    }
    return n > 0;
  };
  // Everything the side channel holds now.
  const auto drainSide = [&] {
    while (side_fd >= 0 && readSide()) {
    }
  };
  if (input.empty()) stdin_fd_.reset();
  const MonoTime start = clock.monotonicNow();
  MonoTime term_at = start + timeout;
  MonoTime kill_at = term_at + kKillGrace;
  bool exited = false;
  bool cancelled = false;
  MonoTime drain_until{};  // after exit: how long pipes held by escaped descendants are read
  bool term_sent = false;
  bool kill_sent = false;

  while (!exited || stdout_fd_.valid() || stderr_fd_.valid()) {
    const MonoTime now = clock.monotonicNow();
    if (exited && now >= drain_until) {
      out.finish();
      err.finish();
      stdout_fd_.reset();
      stderr_fd_.reset();
      break;
    }
    if (!exited && !term_sent && !cancelled && cancel && cancel->requested()) {
      // docs/pipeline.md "Cancellation": stopped like a timeout, from now.
      cancelled = true;
      term_at = now;
      kill_at = now + kKillGrace;
    }
    if (!exited && !term_sent && now >= term_at) {
      signal_tree(SIGTERM);
      term_sent = true;
    }
    if (!exited && !kill_sent && now >= kill_at) {
      signal_tree(SIGKILL);
      kill_sent = true;
    }
    std::array<pollfd, 6> fds{};
    nfds_t count = 0;
    const auto watch = [&](const UniqueFd& fd, short events) {
      if (fd.valid()) fds[count++] = {fd.get(), events, 0};
    };
    if (side_fd >= 0) fds[count++] = {side_fd, POLLIN, 0};  // first: read before the output
    watch(stdin_fd_, POLLOUT);
    watch(stdout_fd_, POLLIN);
    watch(stderr_fd_, POLLIN);
    if (!exited) watch(pidfd_, POLLIN);
    const bool watch_cancel = !exited && !cancelled && cancel && cancel->fd() >= 0;
    if (watch_cancel) fds[count++] = {cancel->fd(), POLLIN, 0};
    MonoTime next = exited       ? drain_until
                    : !term_sent ? term_at
                    : !kill_sent ? kill_at
                                 : now + milliseconds(100);
    // Without an eventfd the request is looked at every 100 ms.
    if (!exited && !cancelled && cancel && cancel->fd() < 0) {
      next = std::min(next, now + milliseconds(100));
    }
    const auto wait = std::chrono::duration_cast<milliseconds>(next - now).count();
    const int ready = ::poll(fds.data(), count, static_cast<int>(std::max<long long>(wait, 0) + 1));
    if (ready < 0 && errno != EINTR) return Error::io(errnoText("poll"));
    for (nfds_t i = 0; i < count && ready > 0; ++i) {
      if (fds[i].revents == 0) continue;
      const int fd = fds[i].fd;
      if (watch_cancel && fd == cancel->fd()) continue;  // looked at on the next turn
      if (fd == side_fd) {
        (void)readSide();
      } else if (fd == pidfd_.get()) {
        exited = true;
        drain_until = clock.monotonicNow() + kKillGrace;
        // One-shot: descendants left behind (daemonised children holding our pipes) die too.
        signal_tree(SIGKILL);
      } else if (fd == stdin_fd_.get()) {
        const ssize_t n = ::write(fd, input.data(), input.size());
        if (n > 0) input.remove_prefix(static_cast<std::size_t>(n));
        if ((n < 0 && errno != EAGAIN && errno != EINTR) || input.empty()) stdin_fd_.reset();
      } else {
        LineSplitter& splitter = fd == stdout_fd_.get() ? out : err;
        UniqueFd& owned = fd == stdout_fd_.get() ? stdout_fd_ : stderr_fd_;
        const ssize_t n = ::read(fd, buffer.data(), buffer.size());
        const int read_errno = errno;
        // What the side channel holds now was written before this output (a read may bring
        // more than poll() saw): delivered first, whatever the scheduling.
        drainSide();
        if (n > 0) {
          splitter.feed({buffer.data(), static_cast<std::size_t>(n)});
        } else if (n == 0 || (read_errno != EAGAIN && read_errno != EINTR)) {
          splitter.finish();
          owned.reset();
        }
      }
    }
  }
  // What the side channel still holds (written just before the end).
  drainSide();
  stdin_fd_.reset();
  auto termination = reap();
  if (!termination.ok()) return termination;
  termination->cancelled = cancelled && term_sent;
  termination->timed_out = term_sent && !termination->cancelled;
  return termination;
}

std::optional<std::string> findExecutable(std::string_view name, std::string_view path_env) {
  if (name.find('/') != std::string_view::npos) return std::string(name);
  while (!path_env.empty()) {
    const std::size_t colon = path_env.find(':');
    std::string_view dir = path_env.substr(0, colon);
    path_env = colon == std::string_view::npos ? std::string_view() : path_env.substr(colon + 1);
    if (dir.empty()) continue;
    std::string candidate = std::string(dir) + "/" + std::string(name);
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

Outcome outcomeOf(const ChildProcess::Termination& termination, std::chrono::milliseconds timeout,
                  std::chrono::nanoseconds duration) {
  Outcome outcome;
  outcome.duration = duration;
  if (termination.cancelled) {
    outcome.cancelled = true;
    outcome.reason = "cancelled";
  } else if (termination.timed_out) {
    outcome.reason = "timeout " + formatDuration(timeout);
  } else if (!termination.exited) {
    outcome.reason = "signal " + std::to_string(termination.signal);
  } else if (termination.code != 0) {
    outcome.reason = "exit " + std::to_string(termination.code);
    outcome.exit_code = termination.code;
  } else {
    outcome.succeeded = true;
    outcome.exit_code = 0;
  }
  return outcome;
}

}  // namespace relay::runtime
