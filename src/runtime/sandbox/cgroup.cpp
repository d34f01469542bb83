#include "runtime/sandbox/cgroup.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <sstream>

#include "common/unique_fd.h"
#include "common/whole_number.h"
#include "runtime/sandbox/cgroup_view.h"

namespace relay::runtime {
namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kCpuPeriodMicros = 100'000;
// v2: where Relay's own processes move when its cgroup must delegate controllers.
constexpr const char* kMainLeaf = "relay-main";
// cgroup v2 cpu.weight: 100 is one ordinary process, 10000 the kernel's maximum.
constexpr int kMaxCpuWeightV2 = 10'000;

// Plain descriptors with O_CLOEXEC rather than fstreams (which open without it): another
// thread may fork a handler at any moment.
Status writeFile(const fs::path& file, const std::string& value) {
  const UniqueFd fd(::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  ssize_t written = -1;
  if (fd.valid()) {
    do {
      written = ::write(fd.get(), value.data(), value.size());
    } while (written < 0 && errno == EINTR);
  }
  if (written != static_cast<ssize_t>(value.size())) {
    const int error = errno;  // kept for the caller (EBUSY: see CgroupManager::create)
    Error failed = Error::unavailable("cannot write \"" + value + "\" to " + file.string() + ": " +
                                      std::strerror(error));
    errno = error;
    return failed;
  }
  return {};
}

// The whole file, or "" when it cannot be read.
std::string readFile(const fs::path& file) {
  const UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
  std::string text;
  if (!fd.valid()) return text;
  char buffer[4096];
  while (true) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return text;
    text.append(buffer, static_cast<std::size_t>(n));
  }
}

std::vector<pid_t> pidsIn(const fs::path& dir) {
  std::vector<pid_t> pids;
  std::istringstream in(readFile(dir / "cgroup.procs"));
  pid_t pid;
  while (in >> pid) pids.push_back(pid);
  return pids;
}

// Kills everything in `dir` and removes it; true when it is gone.
bool killAndRemove(const fs::path& dir, Clock& clock) {
  for (int round = 0; round < 50; ++round) {
    // rmdir refuses (EBUSY) while a process is inside: the list is read only then.
    if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) return true;
    for (pid_t pid : pidsIn(dir)) ::kill(pid, SIGKILL);
    clock.sleepFor(std::chrono::milliseconds(2));  // the kernel empties a cgroup asynchronously
  }
  return false;
}

// Field `index` (1-based, counted after the parenthesised command name as field 3) of
// /proc/<pid>/stat, or "".
std::string statField(const std::string& pid, int index) {
  const std::string stat = readFile("/proc/" + pid + "/stat");
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream rest(stat.substr(close + 1));
  std::string field;
  for (int i = 3; i <= index && rest >> field; ++i) {
  }
  return field;
}

// `<pid>-<start time in clock ticks since boot>` of this process: invocation cgroups are named
// `inv-<this>-<n>`, so that those of an earlier process with the same pid (PID 1 or 2 of a
// restarted container) are told apart from ours.
const std::string& processTag() {
  static const std::string tag = std::to_string(::getpid()) + "-" + statField("self", 22);
  return tag;
}

// The directory open and locked (flock LOCK_EX) by this process: the mark of a live owner,
// which the kernel drops when the owner dies and which holds across pid and mount
// namespaces, unlike a pid (docs/runtimes.md "sandbox"). Invalid when it cannot be opened or
// another process holds the lock.
UniqueFd lockDirectory(const fs::path& dir) {
  UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.valid() && ::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) fd.reset();
  return fd;
}

// Whether `fd` is still the directory at `dir` (not one removed meanwhile).
bool stillNamed(const UniqueFd& fd, const fs::path& dir) {
  struct stat opened {};
  struct stat named {};
  return ::fstat(fd.get(), &opened) == 0 && ::stat(dir.c_str(), &named) == 0 &&
         opened.st_dev == named.st_dev && opened.st_ino == named.st_ino;
}

// The parent pid from /proc/<pid>/stat (after the parenthesised command name), or -1.
pid_t parentOf(pid_t pid) {
  pid_t parent = -1;
  return parseWholeNumber(statField(std::to_string(pid), 4), parent) ? parent : -1;
}

std::string ownPath(const std::string& self_cgroup, const std::string& controller) {
  // Lines are `id:controllers:path`; v2 is `0::path`.
  std::istringstream in(self_cgroup);
  std::string line;
  while (std::getline(in, line)) {
    const auto first = line.find(':');
    const auto second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    std::istringstream names(controllers);
    std::string name;
    while (std::getline(names, name, ',')) {
      if (name == controller) return line.substr(second + 1);
    }
    if (controller.empty() && controllers.empty()) return line.substr(second + 1);
  }
  return {};
}

}  // namespace

Result<CgroupLayout> detectCgroupLayout(const fs::path& mounts_file,
                                        const fs::path& self_cgroup_file,
                                        const std::string& base_name) {
  const std::string mounts = readFile(mounts_file);
  const std::string self = readFile(self_cgroup_file);
  std::istringstream in(mounts);
  std::string device, mount_point, type, options;
  std::string unified_mount;
  CgroupLayout layout;
  std::string rest;
  while (in >> device >> mount_point >> type >> options) {
    std::getline(in, rest);
    if (type == "cgroup2") unified_mount = mount_point;
    if (type != "cgroup") continue;
    std::istringstream opts(options);
    std::string opt;
    while (std::getline(opts, opt, ',')) {
      // The last mount of a controller wins: a later mount shadows an earlier one
      // (enterWritableCgroupView mounts the hierarchies again over a container's).
      const auto place = [&](fs::path& target, const std::string& controller) {
        if (opt == controller) {
          target = fs::path(mount_point) / fs::path(ownPath(self, controller)).relative_path() /
                   base_name;
        }
      };
      place(layout.memory, "memory");
      place(layout.pids, "pids");
      place(layout.cpu, "cpu");
    }
  }
  if (!layout.memory.empty() && !layout.pids.empty() && !layout.cpu.empty()) {
    layout.version = CgroupVersion::kV1;
    return layout;
  }
  if (!unified_mount.empty() &&
      readFile(fs::path(unified_mount) / "cgroup.controllers").find("memory") !=
          std::string::npos) {
    layout = CgroupLayout{};
    layout.version = CgroupVersion::kV2;
    layout.unified =
        fs::path(unified_mount) / fs::path(ownPath(self, "")).relative_path() / base_name;
    return layout;
  }
  return Error::unavailable(
      "no usable cgroup hierarchy: need cgroup v2 with the memory controller, or cgroup v1 "
      "memory, pids and cpu controllers");
}

std::vector<fs::path> CgroupManager::baseDirs() const {
  if (layout_.version == CgroupVersion::kV2) return {layout_.unified};
  return {layout_.memory, layout_.pids, layout_.cpu};
}

Result<std::unique_ptr<CgroupManager>> CgroupManager::create(CgroupLayout layout, Clock& clock,
                                                             int cpu_slots) {
  // At most one prepared cgroup per slot: each finishing invocation prepares its successor's.
  std::unique_ptr<CgroupManager> manager(new CgroupManager(
      std::move(layout), clock, static_cast<std::size_t>(std::max(cpu_slots, 1))));
  const std::vector<fs::path> bases = manager->baseDirs();
  for (const fs::path& base : bases) {
    std::error_code ec;
    fs::create_directories(base, ec);
    if (ec)
      return Error::unavailable("cannot create cgroup " + base.string() + ": " + ec.message());
  }
  // Invocation cgroups of a Relay that died without cleaning up: nobody holds their lock (on
  // the first base's directory). Another live Relay sharing the base, whatever its pid
  // namespace, holds the locks of its own and is left alone. Only the first base's names are
  // judged: on v1 another Relay may share our pids and cpu bases but not our memory one (it
  // has a memory cgroup of its own), and its locks are where we cannot see them; a name we
  // find in those bases alone is never ours to kill (docs/runtimes.md "sandbox").
  std::vector<std::string> names;
  std::error_code listed;
  for (const auto& entry : fs::directory_iterator(bases.front(), listed)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_directory() && name.rfind("inv-", 0) == 0) names.push_back(name);
  }
  for (const std::string& name : names) {
    const UniqueFd held = lockDirectory(bases.front() / name);
    if (!held.valid()) continue;  // held by a live Relay, or removed by its owner meanwhile
    bool removed = true;
    for (const fs::path& base : bases)
      removed = killAndRemove(base / name, manager->clock_) && removed;
    if (removed) ++manager->reaped_;
  }
  if (manager->layout_.version == CgroupVersion::kV2) {
    // The base holds no processes, so its children may use the controllers; the parent must
    // delegate them first.
    const fs::path parent = manager->layout_.unified.parent_path();
    for (const fs::path& dir : {parent, manager->layout_.unified}) {
      auto enabled = writeFile(dir / "cgroup.subtree_control", "+memory +pids +cpu");
      if (!enabled.ok() && errno == EBUSY && dir == parent) {
        // Relay's own cgroup holds processes (Relay, a container's PID 1): v2 lets it hand
        // controllers to its children only once they are in a leaf of their own.
        auto moved = moveProcessesToLeaf(parent, kMainLeaf);
        if (!moved.ok()) return moved.error();
        enabled = writeFile(dir / "cgroup.subtree_control", "+memory +pids +cpu");
      }
      if (!enabled.ok()) return enabled.error();
    }
  }
  if (manager->layout_.version == CgroupVersion::kV1) {
    // Swap accounting is on or off for the whole host: the base has the file when its
    // children will.
    std::error_code ec;
    manager->memsw_ = fs::exists(manager->layout_.memory / "memory.memsw.limit_in_bytes", ec);
  }
  // Each invocation's cpu limit caps it; the base's weight only decides how the sandboxes
  // together share a busy host with everything else (a default weight would starve them).
  const int slots = std::max(cpu_slots, 1);
  auto weighted =
      manager->layout_.version == CgroupVersion::kV2
          ? writeFile(manager->layout_.unified / "cpu.weight",
                      std::to_string(std::min(100 * slots, kMaxCpuWeightV2)))
          : writeFile(manager->layout_.cpu / "cpu.shares", std::to_string(1024 * slots));
  if (!weighted.ok()) return weighted.error();
  return manager;
}

Result<std::unique_ptr<InvocationCgroup>> CgroupManager::createInvocation(
    const Resources& resources) {
  {
    std::lock_guard lock(mutex_);
    auto ready = prepared_.find(keyOf(resources));
    if (ready != prepared_.end() && !ready->second.empty()) {
      std::unique_ptr<InvocationCgroup> cgroup = std::move(ready->second.back());
      ready->second.pop_back();
      --prepared_count_;
      return cgroup;
    }
  }
  return make(resources);
}

void CgroupManager::prepare(const Resources& resources) {
  {
    std::lock_guard lock(mutex_);
    if (prepared_count_ >= max_prepared_) return;
    ++prepared_count_;  // reserved: concurrent callers stay within the bound
  }
  auto cgroup = make(resources);
  std::lock_guard lock(mutex_);
  if (!cgroup.ok()) {
    --prepared_count_;  // the next createInvocation makes one and reports why
    return;
  }
  prepared_[keyOf(resources)].push_back(std::move(cgroup).value());
}

std::size_t CgroupManager::preparedCount() const {
  std::lock_guard lock(mutex_);
  return prepared_count_;
}

Result<std::unique_ptr<InvocationCgroup>> CgroupManager::make(const Resources& resources) {
  // One sequence per process: every manager of the process names its cgroups apart. The
  // name only has to be new (a Relay of another pid namespace may have our pid and start time:
  // mkdir then says EEXIST and the next number is tried); ownership is the lock.
  static std::atomic<std::uint64_t> next_id{0};
  std::unique_ptr<InvocationCgroup> cgroup;
  for (int tries = 0; !cgroup; ++tries) {
    const std::string name = "inv-" + processTag() + "-" + std::to_string(next_id.fetch_add(1));
    std::vector<fs::path> dirs;
    for (const fs::path& base : baseDirs()) dirs.push_back(base / name);
    if (::mkdir(dirs[0].c_str(), 0755) != 0) {
      if (errno == EEXIST && tries < 16) continue;
      return Error::unavailable("cannot create cgroup " + dirs[0].string() + ": " +
                                std::strerror(errno));
    }
    // Locked before anything else is made: a Relay starting now leaves it alone. One starting
    // a moment ago may have judged it unowned between the mkdir and the lock and be removing
    // it (holding its lock meanwhile, or done already): then another name is tried.
    UniqueFd lock = lockDirectory(dirs[0]);
    if (!lock.valid() || !stillNamed(lock, dirs[0])) {
      const int error = errno;
      ::rmdir(dirs[0].c_str());  // empty; whichever of us removes it first
      if (tries < 16) continue;
      return Error::unavailable("cannot lock cgroup " + dirs[0].string() + ": " +
                                std::strerror(error));
    }
    cgroup.reset(new InvocationCgroup(layout_.version, dirs, clock_));
    cgroup->lock_fd_ = std::move(lock);
  }
  const std::vector<fs::path>& dirs = cgroup->dirs_;
  for (std::size_t i = 1; i < dirs.size(); ++i) {
    if (::mkdir(dirs[i].c_str(), 0755) != 0) {
      return Error::unavailable("cannot create cgroup " + dirs[i].string() + ": " +
                                std::strerror(errno));
    }
  }
  const std::string memory = std::to_string(resources.memory_bytes);
  const auto quota = static_cast<std::uint64_t>(std::llround(resources.cpus * kCpuPeriodMicros));
  const std::string pids = std::to_string(resources.pids);
  std::vector<std::pair<fs::path, std::string>> limits;
  if (layout_.version == CgroupVersion::kV2) {
    limits = {
        {dirs[0] / "memory.max", memory},
        {dirs[0] / "memory.swap.max", "0"},
        {dirs[0] / "pids.max", pids},
        {dirs[0] / "cpu.max", std::to_string(quota) + " " + std::to_string(kCpuPeriodMicros)}};
  } else {
    limits = {{dirs[0] / "memory.limit_in_bytes", memory}, {dirs[1] / "pids.max", pids}};
    // Without swap accounting the file is absent; with it, swap must not extend the limit.
    if (memsw_) limits.emplace_back(dirs[0] / "memory.memsw.limit_in_bytes", memory);
    if (!newCgroupsHaveOurPeriod(dirs[2])) {
      limits.emplace_back(dirs[2] / "cpu.cfs_period_us", std::to_string(kCpuPeriodMicros));
    }
    // After the period: the quota is checked against the period in force.
    limits.emplace_back(dirs[2] / "cpu.cfs_quota_us", std::to_string(quota));
  }
  for (const auto& [file, value] : limits) {
    auto written = writeFile(file, value);
    if (!written.ok()) return written.error();
  }
  return cgroup;
}

bool CgroupManager::newCgroupsHaveOurPeriod(const fs::path& fresh_cpu_dir) {
  Period known = period_.load();
  if (known == Period::kUnknown) {
    // The kernel gives every new group the same default period (not its parent's), so what the
    // first one has, they all have; anything else (unreadable, another default) is written.
    const std::string period = readFile(fresh_cpu_dir / "cpu.cfs_period_us");
    known =
        period == std::to_string(kCpuPeriodMicros) + "\n" ? Period::kAlreadySet : Period::kWrite;
    period_.store(known);
  }
  return known == Period::kAlreadySet;
}

InvocationCgroup::~InvocationCgroup() {
  // Removed while still locked; the lock goes with the descriptor, after.
  for (const fs::path& dir : dirs_) killAndRemove(dir, clock_);
}

int InvocationCgroup::directoryFd() const {
  return version_ == CgroupVersion::kV2 ? lock_fd_.get() : -1;
}

std::vector<std::string> InvocationCgroup::procsFiles() const {
  std::vector<std::string> files;
  for (const fs::path& dir : dirs_) files.push_back((dir / "cgroup.procs").string());
  return files;
}

void InvocationCgroup::signalAll(int signal, pid_t spared) const {
  if (spared < 0 && version_ == CgroupVersion::kV2 && signal == SIGKILL &&
      writeFile(dirs_[0] / "cgroup.kill", "1").ok()) {
    return;
  }
  for (pid_t pid : pidsIn(dirs_.back())) {
    if (spared >= 0 && (pid == spared || parentOf(pid) == spared)) continue;
    ::kill(pid, signal);
  }
}

bool InvocationCgroup::oomKilled() const {
  // Both files are `key value` lines with an oom_kill counter.
  const char* file = version_ == CgroupVersion::kV2 ? "memory.events" : "memory.oom_control";
  std::istringstream events(readFile(dirs_[0] / file));
  std::string key;
  long long count = 0;
  while (events >> key >> count) {
    if (key == "oom_kill" && count > 0) return true;
  }
  return false;
}

}  // namespace relay::runtime
