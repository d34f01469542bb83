#include "runtime/sandbox/cgroup_view.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "common/unique_fd.h"

namespace relay::runtime {
namespace {

namespace fs = std::filesystem;

// Generic mount flags of /proc/self/mounts: what remains of a v1 mount's options names its
// controllers.
const std::set<std::string, std::less<>> kGenericMountOptions = {
    "rw",         "ro",          "nosuid",   "nodev", "noexec",  "relatime", "noatime",
    "nodiratime", "strictatime", "lazytime", "sync",  "dirsync", "mand",     "seclabel"};

std::string slurp(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The whole of `text` written to `file` (opened O_WRONLY, never created); errno kept on failure.
bool writeAll(const fs::path& file, const std::string& text, int extra_flags = 0) {
  const UniqueFd fd(::open(file.c_str(), O_WRONLY | O_CLOEXEC | extra_flags));
  if (!fd.valid()) return false;
  ssize_t written;
  do {
    written = ::write(fd.get(), text.data(), text.size());
  } while (written < 0 && errno == EINTR);
  return written == static_cast<ssize_t>(text.size());
}

// An id map that maps every id the parent namespace maps to itself: `inside inside count` for
// each `inside outside count` line of the parent's own map.
std::string identityMap(const std::string& parent_map) {
  std::istringstream in(parent_map);
  std::string map;
  unsigned long long inside = 0, outside = 0, count = 0;
  while (in >> inside >> outside >> count) {
    map +=
        std::to_string(inside) + " " + std::to_string(inside) + " " + std::to_string(count) + "\n";
  }
  return map;
}

int threadCount() {
  std::istringstream status(slurp("/proc/self/status"));
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Threads:", 0) == 0) return std::atoi(line.c_str() + 8);
  }
  return -1;
}

std::string viewErrnoText(const std::string& step, int error) {
  return step + ": " + std::strerror(error);
}

// Enters a user namespace mapping every id to itself. A helper forked first (still in the
// parent namespace, where it holds CAP_SETUID and CAP_SETGID) writes the maps once the
// process has unshared; a pipe tells it when, its exit status whether it could.
Status enterIdentityUserNamespace() {
  const std::string uid_map = identityMap(slurp("/proc/self/uid_map"));
  const std::string gid_map = identityMap(slurp("/proc/self/gid_map"));
  if (uid_map.empty() || gid_map.empty()) {
    return Error::unavailable("cannot read this process's uid_map and gid_map");
  }
  int go[2];
  if (::pipe2(go, O_CLOEXEC) != 0) return Error::unavailable(viewErrnoText("pipe", errno));
  UniqueFd go_read(go[0]);
  UniqueFd go_write(go[1]);
  const pid_t parent = ::getpid();
  const pid_t helper = ::fork();
  if (helper < 0) return Error::unavailable(viewErrnoText("fork", errno));
  if (helper == 0) {
    go_write.reset();
    char byte = 0;
    if (::read(go_read.get(), &byte, 1) != 1) ::_exit(2);  // the parent could not unshare
    const std::string proc = "/proc/" + std::to_string(parent);
    if (!writeAll(proc + "/uid_map", uid_map)) ::_exit(3);
    if (!writeAll(proc + "/gid_map", gid_map)) ::_exit(4);
    ::_exit(0);
  }
  go_read.reset();
  const bool unshared = ::unshare(CLONE_NEWUSER) == 0;
  const int unshare_error = errno;
  if (unshared) (void)!::write(go_write.get(), "g", 1);
  go_write.reset();
  int status = 0;
  while (::waitpid(helper, &status, 0) < 0 && errno == EINTR) {
  }
  if (!unshared) return Error::unavailable(viewErrnoText("unshare(CLONE_NEWUSER)", unshare_error));
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    // Left in a user namespace without maps: nothing here can be done as root any more.
    return Error::unavailable(
        std::string("cannot write the new user namespace's ") +
        (WIFEXITED(status) && WEXITSTATUS(status) == 4 ? "gid_map" : "uid_map") +
        " (the helper needs CAP_SETUID, CAP_SETGID and CAP_SETFCAP)");
  }
  return {};
}

}  // namespace

bool CgroupMount::readOnly() const {
  return std::find(options.begin(), options.end(), "ro") != options.end();
}

std::vector<std::string> CgroupMount::controllers() const {
  std::vector<std::string> names;
  if (type != "cgroup") return names;
  for (const std::string& option : options) {
    if (!kGenericMountOptions.count(option)) names.push_back(option);
  }
  return names;
}

std::vector<CgroupMount> readCgroupMounts(const fs::path& mounts_file) {
  std::vector<CgroupMount> mounts;
  std::istringstream in(slurp(mounts_file));
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string device, point, type, options;
    if (!(fields >> device >> point >> type >> options)) continue;
    if (type != "cgroup" && type != "cgroup2") continue;
    CgroupMount mount{point, type, {}};
    std::istringstream split(options);
    for (std::string option; std::getline(split, option, ',');) mount.options.push_back(option);
    // A later mount on the same point shadows the earlier one.
    std::erase_if(mounts, [&](const CgroupMount& m) { return m.mount_point == mount.mount_point; });
    mounts.push_back(std::move(mount));
  }
  return mounts;
}

bool sandboxCgroupsReadOnly(const std::vector<CgroupMount>& mounts) {
  bool any_needed = false;
  bool read_only = false;
  for (const CgroupMount& mount : mounts) {
    const auto controllers = mount.controllers();
    const bool needed =
        mount.type == "cgroup2" ||
        std::any_of(controllers.begin(), controllers.end(), [](const std::string& name) {
          return name == "memory" || name == "pids" || name == "cpu";
        });
    if (!needed) continue;
    any_needed = true;
    read_only = read_only || mount.readOnly();
  }
  return any_needed && read_only;
}

Result<bool> enterWritableCgroupView(const fs::path& mounts_file) {
  const std::vector<CgroupMount> mounts = readCgroupMounts(mounts_file);
  if (!sandboxCgroupsReadOnly(mounts)) return false;
  const fs::path root = "/sys/fs/cgroup";
  if (const int threads = threadCount(); threads != 1) {
    return Error::internal("a private cgroup view needs a single-threaded process (" +
                           std::to_string(threads) + " threads)");
  }
  if (auto entered = enterIdentityUserNamespace(); !entered.ok()) return entered.error();
  if (::unshare(CLONE_NEWNS | CLONE_NEWCGROUP) != 0) {
    return Error::unavailable(viewErrnoText("unshare(CLONE_NEWNS | CLONE_NEWCGROUP)", errno));
  }
  // Nothing mounted here reaches the container's namespace.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return Error::unavailable(viewErrnoText("making / private", errno));
  }
  const unsigned long flags = MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RELATIME;
  // A fresh tmpfs over the read-only one: mounting a hierarchy on its own mount point again is
  // refused (EBUSY), on the tmpfs it is not.
  if (::mount("tmpfs", root.c_str(), "tmpfs", flags, "mode=0755") != 0) {
    return Error::unavailable(viewErrnoText("mounting a tmpfs on " + root.string(), errno));
  }
  for (const CgroupMount& mount : mounts) {
    const fs::path& point = mount.mount_point;
    if (point != root && point.parent_path() != root) continue;  // outside /sys/fs/cgroup
    std::string data;
    for (const std::string& controller : mount.controllers()) {
      data += (data.empty() ? "" : ",") + controller;
    }
    if (point != root && ::mkdir(point.c_str(), 0755) != 0 && errno != EEXIST) {
      return Error::unavailable(viewErrnoText("mkdir " + point.string(), errno));
    }
    if (::mount(mount.type.c_str(), point.c_str(), mount.type.c_str(), flags,
                data.empty() ? nullptr : data.c_str()) != 0) {
      return Error::unavailable(
          viewErrnoText("mounting " + mount.type + " on " + point.string(), errno));
    }
  }
  return true;
}

Result<int> moveProcessesToLeaf(const fs::path& own, const std::string& leaf) {
  const fs::path target = own / leaf;
  if (::mkdir(target.c_str(), 0755) != 0 && errno != EEXIST) {
    return Error::unavailable(viewErrnoText("cannot create cgroup " + target.string(), errno));
  }
  std::istringstream pids(slurp(own / "cgroup.procs"));
  int moved = 0;
  for (std::string pid; pids >> pid;) {
    // O_APPEND changes nothing for the kernel and keeps every pid in a test's plain file.
    if (writeAll(target / "cgroup.procs", pid + "\n", O_APPEND)) {
      ++moved;
    } else if (errno != ESRCH) {
      return Error::unavailable(
          viewErrnoText("cannot move process " + pid + " into " + target.string(), errno));
    }
  }
  return moved;
}

}  // namespace relay::runtime
