#pragma once

#include <sys/types.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "common/unique_fd.h"
#include "runtime/runtime.h"

namespace relay::runtime {

/// Which cgroup hierarchy the host offers.
enum class CgroupVersion { kV1, kV2 };

/// Where Relay may create per-invocation cgroups: for v2 one directory; for v1 one directory
/// per controller (memory, pids, cpu).
struct CgroupLayout {
  CgroupVersion version = CgroupVersion::kV2;
  std::filesystem::path unified;  // v2: the parent of Relay's invocation cgroups
  std::filesystem::path memory;   // v1
  std::filesystem::path pids;     // v1
  std::filesystem::path cpu;      // v1
};

/// Finds the hierarchy from /proc/self/mounts and /proc/self/cgroup (paths given for tests)
/// and returns the layout under `<own cgroup>/<base_name>` for each controller.
Result<CgroupLayout> detectCgroupLayout(const std::filesystem::path& mounts_file,
                                        const std::filesystem::path& self_cgroup_file,
                                        const std::string& base_name);

/// One invocation's cgroup (a directory per controller on v1). The destructor kills whatever
/// is still inside and removes it.
class InvocationCgroup {
 public:
  ~InvocationCgroup();
  InvocationCgroup(const InvocationCgroup&) = delete;
  InvocationCgroup& operator=(const InvocationCgroup&) = delete;

  /// Files a child writes "0" into to join this cgroup (cgroup.procs of each directory).
  std::vector<std::string> procsFiles() const;
  /// v2: the directory, open for clone3 CLONE_INTO_CGROUP; -1 on v1.
  int directoryFd() const;
  /// Sends `signal` to every process inside (the whole tree, whatever sessions it made) except
  /// the processes in `spared` and their direct children.
  void signalAll(int signal, pid_t spared = -1) const;
  /// Whether the kernel OOM-killed something in this cgroup.
  bool oomKilled() const;

 private:
  friend class CgroupManager;
  InvocationCgroup(CgroupVersion version, std::vector<std::filesystem::path> dirs, Clock& clock)
      : version_(version), dirs_(std::move(dirs)), clock_(clock) {}
  CgroupVersion version_;
  std::vector<std::filesystem::path> dirs_;
  Clock& clock_;
  // The first directory, open and flock()ed for as long as this object lives: how another
  // Relay sharing the base tells a live owner's cgroup from a crashed one's.
  UniqueFd lock_fd_;
};

/// Creates limited per-invocation cgroups under Relay's base cgroup. Thread-safe.
class CgroupManager {
 public:
  /// Prepares the base directories (enabling the v2 controllers it needs) and reaps cgroups a
  /// previous, crashed Relay left behind: those whose lock no live process holds (each
  /// invocation cgroup is flock()ed by its owner while it exists). The base gets the CPU weight of
  /// `cpu_slots` ordinary processes (v1 cpu.shares, v2 cpu.weight): every invocation cgroup below
  /// it together would otherwise weigh as much as one process against the rest of the host
  /// (docs/runtimes.md "sandbox").
  static Result<std::unique_ptr<CgroupManager>> create(CgroupLayout layout, Clock& clock,
                                                       int cpu_slots = kDefaultCpuSlots);
  /// MAX_CONCURRENCY's default: one slot per invocation that may run at once.
  static constexpr int kDefaultCpuSlots = 16;

  /// A new, never used cgroup with the limits applied: one prepare() made ahead when there is
  /// one, else made now. Fails (kUnavailable) when a limit cannot be set.
  Result<std::unique_ptr<InvocationCgroup>> createInvocation(const Resources& resources);
  /// Makes one cgroup with these limits ahead of use, for a later createInvocation, unless
  /// `max_prepared` are waiting already. Empty cgroups cost nothing while they wait; a
  /// cgroup is still never used twice (docs/runtimes.md "sandbox").
  void prepare(const Resources& resources);
  /// How many prepared cgroups are waiting (or being made).
  std::size_t preparedCount() const;

  const CgroupLayout& layout() const { return layout_; }
  /// How many stale invocation cgroups create() removed.
  int reapedAtStart() const { return reaped_; }

 private:
  CgroupManager(CgroupLayout layout, Clock& clock, std::size_t max_prepared)
      : layout_(std::move(layout)), clock_(clock), max_prepared_(max_prepared) {}
  std::vector<std::filesystem::path> baseDirs() const;
  Result<std::unique_ptr<InvocationCgroup>> make(const Resources& resources);
  // v1: whether `fresh_cpu_dir`, a cpu cgroup just made, needs no cpu.cfs_period_us write;
  // decided on the first cgroup made, then remembered.
  bool newCgroupsHaveOurPeriod(const std::filesystem::path& fresh_cpu_dir);

  using LimitsKey = std::tuple<std::uint64_t, double, std::uint32_t>;
  static LimitsKey keyOf(const Resources& resources) {
    return {resources.memory_bytes, resources.cpus, resources.pids};
  }

  CgroupLayout layout_;
  Clock& clock_;
  int reaped_ = 0;
  // v1, decided once (docs/runtimes.md "sandbox"): whether swap is accounted (the memsw limit
  // exists), and whether a new cgroup already has Relay's CPU period (unknown until the first
  // cgroup is made; each write of the period costs the kernel a bandwidth update).
  bool memsw_ = false;
  enum class Period { kUnknown, kAlreadySet, kWrite };
  std::atomic<Period> period_{Period::kUnknown};
  const std::size_t max_prepared_;
  mutable std::mutex mutex_;
  std::map<LimitsKey, std::vector<std::unique_ptr<InvocationCgroup>>> prepared_;
  std::size_t prepared_count_ = 0;
};

}  // namespace relay::runtime
