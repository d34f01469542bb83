#include "runtime/launcher/native_setup.h"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "runtime/child_setup.h"
#include "runtime/handover.h"

namespace relay::runtime::native {
namespace {

// Every failure before the command runs: said on stderr and on the status descriptor (the
// handler never started: docs/runtimes.md "Set-up failures"), exit 127.
[[noreturn]] void fail(const std::string& step) {
  const std::string message = "native sandbox: " + step + ": " + std::strerror(errno);
  const std::string report = std::string(kRefusedReport) + message + "\n";
  (void)!::write(kStatusFd, report.data(), report.size());
  std::fprintf(stderr, "relay-launcher: %s\n", message.c_str());
  std::_Exit(127);
}

void check(bool ok, const std::string& step) {
  if (!ok) fail(step);
}

// What bwrap gives a read-only bind: read-only, nosuid, nodev (unless `devices`), all of it
// (AT_RECURSIVE unless `flags` says otherwise), and private: no mount event propagates in from
// the host's tree (an open_tree clone of a shared mount would otherwise be its peer) or out.
bool setReadOnly(int dirfd, const char* path, unsigned flags, bool devices = false,
                 bool recursive = true) {
  mount_attr attr{};
  attr.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | (devices ? 0 : MOUNT_ATTR_NODEV);
  attr.propagation = MS_PRIVATE;
  return ::mount_setattr(dirfd, path, flags | (recursive ? AT_RECURSIVE : 0), &attr, sizeof attr) ==
         0;
}

void mkdirs(const std::string& path) {
  for (std::size_t at = 1; at != std::string::npos; at = path.find('/', at + 1)) {
    ::mkdir(path.substr(0, at).c_str(), 0755);
  }
  ::mkdir(path.c_str(), 0755);
}

// A read-only recursive bind of host `source` at `target` (under the new root), as bwrap's
// --ro-bind(-try): absent sources are skipped.
void roBind(const std::string& source, const std::string& target, bool devices = false) {
  struct stat info {};
  if (::stat(source.c_str(), &info) != 0) return;
  if (S_ISDIR(info.st_mode)) {
    mkdirs(target);
  } else {
    mkdirs(target.substr(0, target.rfind('/')));
    const int fd = ::open(target.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0444);
    check(fd >= 0, "create " + target);
    ::close(fd);
  }
  check(::mount(source.c_str(), target.c_str(), nullptr, MS_BIND | MS_REC, nullptr) == 0,
        "bind " + source);
  check(setReadOnly(AT_FDCWD, target.c_str(), 0, devices), "read-only " + target);
}

// bwrap's --dev: a tmpfs with the harmless device nodes of the host, the usual links, shm and
// pts directories (devpts is mounted per sandbox: a shared instance would be shared ptys).
void makeDev(const std::string& root) {
  const std::string dev = root + "/dev";
  mkdirs(dev);
  check(::mount("tmpfs", dev.c_str(), "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755") == 0,
        "tmpfs /dev");
  for (const char* node : {"null", "zero", "full", "random", "urandom", "tty"}) {
    roBind(std::string("/dev/") + node, dev + "/" + node, /*devices=*/true);
  }
  const char* links[][2] = {{"/proc/self/fd", "fd"},       {"/proc/self/fd/0", "stdin"},
                            {"/proc/self/fd/1", "stdout"}, {"/proc/self/fd/2", "stderr"},
                            {"/proc/kcore", "core"},       {"pts/ptmx", "ptmx"}};
  for (const auto& link : links) {
    check(::symlink(link[0], (dev + "/" + link[1]).c_str()) == 0, std::string("link ") + link[1]);
  }
  mkdirs(dev + "/shm");
  mkdirs(dev + "/pts");
  // Read-only once made: its tmpfs would be an uncapped writable place.
  check(::mount(nullptr, dev.c_str(), nullptr, MS_REMOUNT | MS_NOSUID | MS_NOEXEC | MS_RDONLY,
                nullptr) == 0,
        "read-only /dev");
  check(setReadOnly(AT_FDCWD, dev.c_str(), 0, /*devices=*/true), "read-only /dev mount");
}

// Reads the raw seccomp program from descriptor 3 (as bwrap --seccomp 3 does) and closes it.
std::vector<sock_filter> readSeccomp() {
  std::string bytes;
  char buffer[4096];
  while (true) {
    const ssize_t n = ::read(3, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    check(n >= 0, "read the seccomp program");
    if (n == 0) break;
    bytes.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(3);
  errno = EINVAL;
  check(!bytes.empty() && bytes.size() % sizeof(sock_filter) == 0, "seccomp program size");
  std::vector<sock_filter> program(bytes.size() / sizeof(sock_filter));
  std::memcpy(program.data(), bytes.data(), bytes.size());
  return program;
}

void writeFile(const char* path, const std::string& text) {
  const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  check(fd >= 0 && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()),
        std::string("write ") + path);
  ::close(fd);
}

// The loopback interface up, as bwrap leaves it: a network namespace's own, nothing beyond.
void loopbackUp() {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  check(fd >= 0, "socket");
  ifreq request{};
  std::strncpy(request.ifr_name, "lo", IFNAMSIZ - 1);
  check(::ioctl(fd, SIOCGIFFLAGS, &request) == 0, "loopback flags");
  request.ifr_flags |= IFF_UP | IFF_RUNNING;
  check(::ioctl(fd, SIOCSIFFLAGS, &request) == 0, "loopback up");
  ::close(fd);
}

// bwrap covers these read-only: the kernel's knobs stay out of reach whatever else allows.
// After the command's user namespace set its own limit through /proc/sys (becomeCommand).
void coverProc() {
  for (const char* path : {"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus"}) {
    if (::access(path, F_OK) != 0) continue;
    check(::mount(path, path, nullptr, MS_BIND | MS_REC, nullptr) == 0,
          std::string("bind ") + path);
    check(setReadOnly(AT_FDCWD, path, 0), std::string("read-only ") + path);
  }
}

// One byte over a pipe between the init and the command; false at EOF (the other ended).
bool signalPeer(int fd) { return ::write(fd, "x", 1) == 1; }
bool awaitPeer(int fd) {
  char byte;
  while (true) {
    const ssize_t n = ::read(fd, &byte, 1);
    if (n < 0 && errno == EINTR) continue;
    return n == 1;
  }
}

// The mounts of one sandbox, in its copy of the prepared tree (pid 1, still root of the host's
// user namespace, which owns this mount namespace: the handler can never change it).
void mountSandbox(int app_tree, unsigned long tmp_bytes, uid_t id) {
  check(::mount("proc", "/proc", "proc", MS_NOSUID | MS_NOEXEC | MS_NODEV, nullptr) == 0,
        "mount /proc");
  const std::string tmp_options = "mode=0755,uid=" + std::to_string(id) +
                                  ",gid=" + std::to_string(id) +
                                  ",size=" + std::to_string(tmp_bytes);
  check(::mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, tmp_options.c_str()) == 0,
        "tmpfs /tmp");
  check(::mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
                "newinstance,ptmxmode=0666,mode=620") == 0,
        "devpts");
  check(::move_mount(app_tree, "", AT_FDCWD, "/app", MOVE_MOUNT_F_EMPTY_PATH) == 0, "mount /app");
  ::close(app_tree);
  check(::sethostname(kHostname, std::strlen(kHostname)) == 0, "hostname");
  loopbackUp();
}

// Empties the bounding set (needs CAP_SETPCAP in the current user namespace).
void dropBoundingSet() {
  for (int cap = 0; cap <= CAP_LAST_CAP; ++cap) {
    check(::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0 || errno == EINVAL, "bounding set");
  }
}

// The app's uid and gid, no supplementary groups, an empty bounding set (while it still holds
// CAP_SETPCAP): what both the init and the command's process become in the host's user namespace.
void becomeApp(uid_t id) {
  dropBoundingSet();
  check(::setgroups(0, nullptr) == 0, "setgroups");
  check(::setresgid(id, id, id) == 0 && ::setresuid(id, id, id) == 0, "drop to the app's uid");
}

// No capability left in any set, no_new_privs, and death with the parent (set after the last
// change of credentials, which clears it).
void dropCapabilities() {
  check(::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) == 0 || errno == EINVAL,
        "ambient capabilities");
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2]{};
  check(::syscall(SYS_capset, &header, data) == 0, "drop capabilities");
  check(::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0, "no_new_privs");
  check(::prctl(PR_SET_PDEATHSIG, SIGKILL) == 0, "die with parent");
}

// The sandbox's init (pid 1) once the command's namespace is set: the app's uid in the host's
// user namespace, an empty bounding set, no capabilities, no_new_privs.
void dropEverything(uid_t id) {
  becomeApp(id);
  dropCapabilities();
}

// The command's process (pid 2): its own session, the app's uid mapped in a user namespace of
// its own that owns nothing and may create no other (--disable-userns), no capabilities in any,
// no_new_privs, the seccomp filter; then the command. `ready` tells the init its namespace is
// set, `go` says the init has covered /proc and dropped everything (EOF: it failed).
[[noreturn]] void becomeCommand(uid_t id, const std::vector<sock_filter>& seccomp, char** command,
                                int (*launcher_main)(int, char**), int ready, int go) {
  check(::setsid() >= 0, "setsid");
  check(::chdir("/app") == 0, "chdir /app");
  becomeApp(id);
  // Changing uid made it undumpable, which gives /proc/self to root: its maps could not be
  // written. An exec resets it anyway.
  check(::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) == 0, "dumpable");
  check(::unshare(CLONE_NEWUSER) == 0, "user namespace");
  const std::string map = std::to_string(id) + " " + std::to_string(id) + " 1\n";
  writeFile("/proc/self/uid_map", map);
  writeFile("/proc/self/setgroups", "deny\n");
  writeFile("/proc/self/gid_map", map);
  // No user namespace may be made in this one (bwrap's --disable-userns; the seccomp filter
  // denies it as well): it holds the capability to say so only until the drop below.
  writeFile("/proc/sys/user/max_user_namespaces", "0\n");
  check(signalPeer(ready), "tell the init");
  ::close(ready);
  errno = ECHILD;
  check(awaitPeer(go), "the init's set-up");
  ::close(go);
  // The new user namespace gave a full bounding set and full capabilities in it: drop them all.
  dropBoundingSet();
  dropCapabilities();
  // Every signal open to the command, but SIGTERM for the launcher's hand-over, which holds it
  // until it reported `started` (takeHandover).
  const bool launcher = std::strcmp(command[0], kLauncherMount) == 0 && command[1] == nullptr;
  sigset_t mask;
  sigemptyset(&mask);
  if (launcher) sigaddset(&mask, SIGTERM);
  ::sigprocmask(SIG_SETMASK, &mask, nullptr);
  // The command keeps stdin, stdout, stderr and the status descriptor, as under bwrap.
  check(child_setup::markCloexecFrom(kStatusFd + 1), "close-on-exec");
  sock_fprog program{static_cast<unsigned short>(seccomp.size()),
                     const_cast<sock_filter*>(seccomp.data())};
  check(::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program, 0, 0) == 0, "seccomp");
  if (launcher) {
    std::exit(launcher_main(1, command));  // the launcher is this program: no second exec
  }
  ::execvp(command[0], command);
  std::fprintf(stderr, "relay-launcher: cannot execute %s: %s\n", command[0], std::strerror(errno));
  std::_Exit(127);
}

int exitCodeOf(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 127;
}

// Waits for `child`, reaping whatever else ends meanwhile (an init's duty); its exit code.
int waitFor(pid_t child) {
  while (true) {
    int status = 0;
    const pid_t ended = ::waitpid(-1, &status, 0);
    if (ended < 0 && errno == EINTR) continue;
    if (ended < 0) return 127;
    if (ended == child) return exitCodeOf(status);
  }
}

}  // namespace

int buildTemplate(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: relay-launcher --native-template <launcher> <path>...\n");
    return 2;
  }
  check(::prctl(PR_SET_PDEATHSIG, SIGKILL) == 0, "die with parent");
  check(::unshare(CLONE_NEWNS) == 0, "mount namespace");
  // Nothing propagates between this tree and the host's, nor between sandboxes made from it.
  check(::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0, "private /");
  // Held before the tmpfs below covers /tmp: the launcher may live under it (a build tree in
  // /tmp); it is bound from this descriptor.
  const int launcher = ::open(argv[2], O_PATH | O_CLOEXEC);
  check(launcher >= 0, std::string("open the launcher ") + argv[2]);
  const std::string root = "/tmp";  // this namespace's own tmpfs over it: the new root
  check(::mount("tmpfs", root.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") == 0,
        "tmpfs root");
  for (int i = 3; i < argc; ++i) roBind(argv[i], root + argv[i]);
  // Merged-/usr hosts have /bin, /lib... as symlinks into /usr; mirror them, else bind them.
  for (const char* top : {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}) {
    struct stat info {};
    if (::lstat(top, &info) != 0) continue;
    if (S_ISLNK(info.st_mode)) {
      char target[4096];
      const ssize_t n = ::readlink(top, target, sizeof target - 1);
      check(n > 0, std::string("readlink ") + top);
      target[n] = '\0';
      check(::symlink(target, (root + top).c_str()) == 0, std::string("symlink ") + top);
    } else if (S_ISDIR(info.st_mode)) {
      roBind(top, root + top);
    }
  }
  makeDev(root);
  for (const char* dir : {"/proc", "/tmp", "/app", "/run"}) mkdirs(root + dir);
  const std::string held = "/proc/self/fd/" + std::to_string(launcher);
  struct stat info {};
  check(::stat(held.c_str(), &info) == 0 && S_ISREG(info.st_mode), "the launcher's descriptor");
  roBind(held, root + kLauncherMount);
  ::close(launcher);
  check(::chdir(root.c_str()) == 0, "chdir root");
  check(::syscall(SYS_pivot_root, ".", ".") == 0, "pivot_root");
  check(::umount2(".", MNT_DETACH) == 0, "detach the host's tree");
  check(::chdir("/") == 0, "chdir /");
  check(::mount(nullptr, "/", nullptr, MS_REMOUNT | MS_NOSUID | MS_NODEV | MS_RDONLY, nullptr) == 0,
        "read-only root");
  // Not recursive: the binds below keep their own flags (/dev's nodes stay usable devices).
  check(setReadOnly(AT_FDCWD, "/", 0, false, /*recursive=*/false), "read-only root mount");
  check(::write(3, "ready\n", 6) == 6, "report ready");
  char byte;
  while (::read(0, &byte, 1) > 0) {
  }
  return 0;
}

int runSandbox(int argc, char** argv, int (*launcher_main)(int, char**)) {
  if (argc < 7 || std::strcmp(argv[5], "--") != 0) {
    std::fprintf(stderr, "usage: relay-launcher --native <uid> <tmp bytes> <app dir> -- cmd\n");
    return 127;
  }
  const uid_t id = static_cast<uid_t>(std::strtoul(argv[2], nullptr, 10));
  const unsigned long tmp_bytes = std::strtoul(argv[3], nullptr, 10);
  const std::vector<sock_filter> seccomp = readSeccomp();
  // The app, from the host's tree, before entering the prepared one.
  const int app_tree =
      ::open_tree(AT_FDCWD, argv[4], OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
  check(app_tree >= 0, std::string("open the app directory ") + argv[4]);
  check(setReadOnly(app_tree, "", AT_EMPTY_PATH), "read-only app");
  check(::setns(kTemplateFd, CLONE_NEWNS) == 0, "enter the prepared tree");
  ::close(kTemplateFd);
  check(::unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS |
                  CLONE_NEWCGROUP) == 0,
        "namespaces");
  const pid_t init = ::fork();
  check(init >= 0, "fork");
  if (init > 0) {
    // Outside: bwrap's monitor. Its parent, Relay, sees the command's status.
    for (int fd = 0; fd <= kStatusFd; ++fd) ::close(fd);
    ::close(app_tree);
    return waitFor(init);
  }
  check(::prctl(PR_SET_PDEATHSIG, SIGKILL) == 0, "die with parent");
  mountSandbox(app_tree, tmp_bytes, id);
  int ready[2], go[2];
  check(::pipe2(ready, O_CLOEXEC) == 0 && ::pipe2(go, O_CLOEXEC) == 0, "pipe2");
  // The command's process is born with SIGTERM held (becomeCommand decides when it opens): a
  // stop before the command started is taken once it has (takeHandover). The init never needs
  // it: Relay spares it, and a pid 1 ignores it from inside.
  sigset_t term;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  ::sigprocmask(SIG_BLOCK, &term, nullptr);
  const pid_t command = ::fork();
  check(command >= 0, "fork");
  if (command == 0) {
    ::close(ready[0]);
    ::close(go[1]);
    becomeCommand(id, seccomp, argv + 6, launcher_main, ready[1], go[0]);
  }
  ::close(ready[1]);
  ::close(go[0]);
  // The command set its user namespace's limit through /proc/sys; now it is covered. A command
  // that failed first (EOF) is reaped below with its status.
  if (awaitPeer(ready[0])) {
    coverProc();
    // pid 1 lives among the handler's processes, so it keeps no more than they have, as
    // bwrap's init: the app's uid (which leaves it undumpable: not traceable by them), no
    // capabilities, no_new_privs; before the command goes on.
    dropEverything(id);
    check(signalPeer(go[1]), "release the command");
  }
  ::close(ready[0]);
  ::close(go[1]);
  // pid 1: reaps, ends (and with it the namespace) when the command ends.
  for (int fd = 0; fd <= kStatusFd; ++fd) ::close(fd);
  return waitFor(command);
}

int selfTest(int argc, char** argv) {
  if (argc < 3) return 2;
  const uid_t id = static_cast<uid_t>(std::strtoul(argv[2], nullptr, 10));
  std::vector<std::string> broken;
  const auto expect = [&broken](bool ok, const char* what) {
    if (!ok) broken.emplace_back(what);
  };
  expect(::getuid() == id && ::geteuid() == id && ::getgid() == id, "the app's uid and gid");
  std::ifstream status("/proc/self/status");
  std::string line, all;
  while (std::getline(status, line)) all += line + "\n";
  expect(all.find("CapEff:\t0000000000000000") != std::string::npos, "no effective capabilities");
  expect(all.find("CapBnd:\t0000000000000000") != std::string::npos, "empty bounding set");
  expect(all.find("NoNewPrivs:\t1") != std::string::npos, "no_new_privs");
  expect(all.find("Seccomp:\t2") != std::string::npos, "seccomp filter");
  int processes = 0;
  if (DIR* proc = ::opendir("/proc")) {
    while (dirent* entry = ::readdir(proc)) {
      if (entry->d_name[0] >= '0' && entry->d_name[0] <= '9') ++processes;
    }
    ::closedir(proc);
  }
  expect(processes >= 1 && processes <= 2, "its own pid namespace");
  if (struct if_nameindex* names = ::if_nameindex()) {
    expect(names[0].if_name != nullptr && std::strcmp(names[0].if_name, "lo") == 0 &&
               names[1].if_name == nullptr,
           "no network but loopback");
    ::if_freenameindex(names);
  }
  for (const char* path : {"/relay-probe", "/usr/relay-probe", "/app/relay-probe",
                           "/dev/relay-probe", "/proc/sys/kernel/relay-probe"}) {
    const int fd = ::open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    expect(fd < 0, "read-only root, /usr, /app, /dev, /proc/sys");
    if (fd >= 0) ::close(fd);
  }
  const int tmp = ::open("/tmp/relay-probe", O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
  expect(tmp >= 0, "writable /tmp");
  if (tmp >= 0) ::close(tmp);
  for (const char* path : {"/root", "/home", "/work", "/etc/shadow"}) {
    expect(::access(path, F_OK) != 0, "none of the host's other files");
  }
  expect(::unshare(CLONE_NEWUSER) != 0, "no new user namespaces");
  std::ifstream limit("/proc/sys/user/max_user_namespaces");
  std::string max;
  expect(std::getline(limit, max) && max == "0", "user.max_user_namespaces 0");
  char host[64] = {};
  ::gethostname(host, sizeof host - 1);
  expect(std::strcmp(host, kHostname) == 0, "its own host name");
  for (const std::string& what : broken)
    std::fprintf(stderr, "native self-test: %s\n", what.c_str());
  return broken.empty() ? 0 : 1;
}

}  // namespace relay::runtime::native
