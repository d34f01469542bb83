#include "runtime/sandbox/host_diagnosis.h"

#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/unique_fd.h"
#include "runtime/sandbox/cgroup.h"
#include "runtime/sandbox/cgroup_view.h"
#include "runtime/sandbox/sandbox_probe.h"

namespace relay::runtime {
namespace {

namespace fs = std::filesystem;

constexpr uid_t kSandboxUser = 65534;

// The fixes, in the words docs/deployment.md uses.
constexpr const char* kSeccompFix =
    "run the container with Relay's seccomp profile, which adds to Docker's default only what "
    "bubblewrap needs: docker run --security-opt seccomp=seccomp.json (deploy/container/"
    "seccomp.json; Kubernetes: securityContext.seccompProfile type Localhost)";
constexpr const char* kAppArmorFix =
    "run the container unconfined by AppArmor, whose docker-default profile denies mount: docker "
    "run --security-opt apparmor=unconfined (Kubernetes: securityContext.appArmorProfile type "
    "Unconfined)";
constexpr const char* kProcFixContainer =
    "unmask the container's /proc, whose masked paths make a fresh /proc \"too revealing\" for "
    "the kernel: docker run --security-opt systempaths=unconfined (Kubernetes: "
    "securityContext.procMount: Unmasked)";
constexpr const char* kProcFixSystemd =
    "remove ProtectKernelTunables=, ProtectKernelLogs= and ProtectProc= from the unit: their "
    "overmounts of /proc make a fresh /proc \"too revealing\" for the kernel";
constexpr const char* kTunFixContainer =
    "give the container the tun device: docker run --device /dev/net/tun (Kubernetes: a device "
    "plugin that exposes /dev/net/tun); needed by network: true apps only";

std::string firstLine(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

// Runs `body` in a child process and returns its exit code (or 128 + signal); -1 when fork
// fails. The child must end with _exit.
template <typename Body>
int inChild(Body body) {
  const pid_t child = ::fork();
  if (child < 0) return -1;
  if (child == 0) ::_exit(body());
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// In a child: drops to the sandbox user, as Relay's child does before bwrap.
bool dropToSandboxUser() {
  return ::setgroups(0, nullptr) == 0 &&
         ::setresgid(kSandboxUser, kSandboxUser, kSandboxUser) == 0 &&
         ::setresuid(kSandboxUser, kSandboxUser, kSandboxUser) == 0;
}

std::string userNamespaceFix(const HostFacts& facts) {
  if (facts.unprivileged_userns_clone == "0") {
    return "allow unprivileged user namespaces on the host: sysctl -w "
           "kernel.unprivileged_userns_clone=1";
  }
  if (facts.max_user_namespaces == "0") {
    return "allow user namespaces on the host: sysctl -w user.max_user_namespaces=15000";
  }
  if (facts.apparmor_restrict_userns == "1") {
    return "let unprivileged processes create user namespaces on the host (Ubuntu 24.04 "
           "restricts them): sysctl -w kernel.apparmor_restrict_unprivileged_userns=0, or an "
           "AppArmor profile granting userns to /usr/bin/bwrap";
  }
  if (facts.in_container && facts.seccomp_filtered) return kSeccompFix;
  if (facts.apparmor_confined) return kAppArmorFix;
  return facts.in_container ? kSeccompFix
                            : "allow unprivileged user namespaces on the host (sysctl "
                              "kernel.unprivileged_userns_clone=1, user.max_user_namespaces)";
}

std::string mountFix(const HostFacts& facts) {
  if (facts.in_container && facts.seccomp_filtered) return kSeccompFix;
  if (facts.apparmor_confined) return kAppArmorFix;
  return kSeccompFix;
}

}  // namespace

HostFacts HostFacts::read() {
  HostFacts facts;
  std::error_code ec;
  facts.in_kubernetes = std::getenv("KUBERNETES_SERVICE_HOST") != nullptr;
  facts.in_container = facts.in_kubernetes || fs::exists("/.dockerenv", ec) ||
                       fs::exists("/run/.containerenv", ec) || std::getenv("container") != nullptr;
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Seccomp:", 0) == 0)
      facts.seccomp_filtered = line.find('2') != std::string::npos;
  }
  const std::string label = firstLine("/proc/self/attr/current");
  facts.apparmor_confined = !label.empty() && label.rfind("unconfined", 0) != 0 &&
                            firstLine("/sys/module/apparmor/parameters/enabled") == "Y";
  facts.unprivileged_userns_clone = firstLine("/proc/sys/kernel/unprivileged_userns_clone");
  facts.max_user_namespaces = firstLine("/proc/sys/user/max_user_namespaces");
  facts.apparmor_restrict_userns =
      firstLine("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
  facts.under_systemd = std::getenv("INVOCATION_ID") != nullptr;
  return facts;
}

LayerCheck checkUserNamespaces(const HostFacts& facts) {
  const int code = inChild([] {
    if (!dropToSandboxUser()) return 100;
    return ::unshare(CLONE_NEWUSER) == 0 ? 0 : errno;
  });
  if (code == 0) return {true, "uid 65534 can create a user namespace", {}};
  if (code == 100)
    return {false, "cannot switch to uid 65534 (Relay must run as root)", "run relay as root"};
  return {false,
          "uid 65534 cannot create a user namespace: " +
              std::string(code > 0 && code < 100 ? std::strerror(code) : "the check failed"),
          userNamespaceFix(facts)};
}

LayerCheck checkProcMount(const HostFacts& facts) {
  // 2: no user namespace (checkUserNamespaces says why); 3: no pid namespace; other: errno.
  const int code = inChild([] {
    if (!dropToSandboxUser()) return 100;
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID) != 0) return 101;
    return inChild([] {
      if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return 102;
      return ::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) == 0
                 ? 0
                 : errno;
    });
  });
  if (code == 0) return {true, "a fresh /proc mounts in a new pid namespace", {}};
  if (code == 101 || code == 100) {
    return {false, "not checked: no user namespace for uid 65534", userNamespaceFix(facts)};
  }
  if (code == 102)
    return {false, "cannot make / private in a new mount namespace", mountFix(facts)};
  return {false,
          "a fresh /proc is refused: " +
              std::string(code > 0 && code < 100 ? std::strerror(code) : "the check failed"),
          facts.under_systemd && !facts.in_container ? kProcFixSystemd : kProcFixContainer};
}

LayerCheck checkCgroups(const HostFacts& facts) {
  const std::vector<CgroupMount> mounts = readCgroupMounts("/proc/self/mounts");
  auto layout = detectCgroupLayout("/proc/self/mounts", "/proc/self/cgroup", "relay-sandbox");
  if (!layout.ok()) {
    return {false, layout.error().message,
            "mount the cgroup file system: cgroup2 on /sys/fs/cgroup (or the v1 memory, pids and "
            "cpu hierarchies)"};
  }
  const std::string version = layout->version == CgroupVersion::kV2 ? "v2" : "v1";
  if (sandboxCgroupsReadOnly(mounts)) {
    if (auto view = probeCgroupView(); !view.ok()) {
      return {false,
              "cgroup " + version +
                  " is mounted read-only and Relay cannot mount a writable view: " +
                  view.error().message,
              fixForReadOnlyCgroups(view.error().message, facts)};
    }
    return {true,
            "cgroup " + version +
                " is mounted read-only here; Relay mounts a writable view of its own cgroup in a "
                "private cgroup namespace",
            {}};
  }
  const fs::path own = layout->version == CgroupVersion::kV2 ? layout->unified.parent_path()
                                                             : layout->memory.parent_path();
  const fs::path test = own / ("relay-doctor-" + std::to_string(::getpid()));
  if (::mkdir(test.c_str(), 0755) != 0) {
    return {
        false,
        "cgroup " + version + " at " + own.string() + " is not writable: " + std::strerror(errno),
        facts.under_systemd ? "set Delegate=yes in the unit (relay.service has it)"
                            : "run relay as root with a writable cgroup of its own"};
  }
  ::rmdir(test.c_str());
  return {true, "cgroup " + version + ", writable at " + own.string(), {}};
}

LayerCheck checkTunDevice(const HostFacts& facts) {
  struct stat info {};
  if (::stat("/dev/net/tun", &info) != 0) {
    return {false, "/dev/net/tun does not exist",
            facts.in_container ? kTunFixContainer
                               : "load the tun module (modprobe tun); network: true apps only"};
  }
  const std::string problem = tunAccessProblem("/dev/net/tun", kSandboxUser, kSandboxUser);
  if (!problem.empty()) {
    return {false, problem,
            "chmod 0666 /dev/net/tun (Debian's udev default); network: true apps only"};
  }
  return {true, "/dev/net/tun opens for uid 65534", {}};
}

std::string fixForSandboxFailure(const std::string& message, const HostFacts& facts) {
  const auto has = [&message](const char* text) { return message.find(text) != std::string::npos; };
  if (has("create new namespace") || has("Creating new namespace") || has("uid map") ||
      has("setting up uid map") || has("unshare")) {
    return userNamespaceFix(facts);
  }
  if (has("mount proc") || has("proc on")) {
    return facts.under_systemd && !facts.in_container ? kProcFixSystemd : kProcFixContainer;
  }
  if (has("tun")) return facts.in_container ? kTunFixContainer : "chmod 0666 /dev/net/tun";
  if (has("set hostname")) {
    return facts.under_systemd && !facts.in_container
               ? "remove ProtectHostname= from the unit: its seccomp filter denies sethostname, "
                 "which bwrap makes in the sandbox's own UTS namespace"
               : mountFix(facts);
  }
  if (has("mount") || has("pivot_root")) return mountFix(facts);
  return {};
}

std::string fixForReadOnlyCgroups(const std::string& why, const HostFacts& facts) {
  if (why.find("CLONE_NEWUSER") != std::string::npos) return userNamespaceFix(facts);
  if (why.find("mount") != std::string::npos || why.find("CLONE_NEWNS") != std::string::npos) {
    return mountFix(facts);
  }
  if (why.find("uid_map") != std::string::npos || why.find("gid_map") != std::string::npos) {
    return "keep CAP_SETUID, CAP_SETGID and CAP_SETFCAP in the container (docker run --cap-add "
           "SETUID --cap-add SETGID --cap-add SETFCAP): Relay maps its user namespace with "
           "them (Linux 5.12 and later ask CAP_SETFCAP to map uid 0)";
  }
  return kSeccompFix;
}

Status probeCgroupView() {
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return Error::unavailable(std::strerror(errno));
  UniqueFd read_end(report[0]);
  UniqueFd write_end(report[1]);
  const int code = inChild([&] {
    read_end.reset();
    std::string message;
    auto entered = enterWritableCgroupView();
    if (!entered.ok()) {
      message = entered.error().message;
    } else {
      auto layout = detectCgroupLayout("/proc/self/mounts", "/proc/self/cgroup", "relay-sandbox");
      if (!layout.ok()) {
        message = layout.error().message;
      } else {
        const fs::path own = layout->version == CgroupVersion::kV2 ? layout->unified.parent_path()
                                                                   : layout->memory.parent_path();
        const fs::path test = own / "relay-doctor-probe";
        if (::mkdir(test.c_str(), 0755) != 0 && errno != EEXIST) {
          message = "cannot create a cgroup under " + own.string() + ": " + std::strerror(errno);
        } else {
          ::rmdir(test.c_str());
        }
      }
    }
    (void)!::write(write_end.get(), message.data(), message.size());
    return message.empty() ? 0 : 1;
  });
  write_end.reset();
  std::string message;
  char buffer[512];
  ssize_t n;
  while ((n = ::read(read_end.get(), buffer, sizeof buffer)) > 0) message.append(buffer, n);
  if (code == 0) return {};
  return Error::unavailable(message.empty() ? "the check failed (exit " + std::to_string(code) + ")"
                                            : message);
}

}  // namespace relay::runtime
