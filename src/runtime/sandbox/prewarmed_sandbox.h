#pragma once

#include <memory>
#include <utility>

#include "common/unique_fd.h"
#include "runtime/child_process.h"
#include "runtime/prewarm_pool.h"
#include "runtime/sandbox/cgroup.h"

namespace relay::runtime {

/// A bwrap sandbox running relay-launcher (or a warm interpreter) in its own fresh, limited
/// cgroup, waiting on stdin for the one invocation it will serve, with the read end of its status
/// descriptor (kStatusFd, docs/runtimes.md "Set-up failures"). Every sandboxed invocation runs in
/// one, prepared ahead of demand or started for it. Destroyed unused: bwrap's group is killed,
/// then the cgroup's remaining processes, then the cgroup is removed.
class PrewarmedSandbox final : public WarmSandbox {
 public:
  PrewarmedSandbox(std::unique_ptr<InvocationCgroup> cgroup, std::unique_ptr<ChildProcess> bwrap,
                   UniqueFd status)
      : cgroup_(std::move(cgroup)), bwrap_(std::move(bwrap)), status_(std::move(status)) {}

  bool alive() const override { return !bwrap_->ended(); }
  InvocationCgroup& cgroup() { return *cgroup_; }
  ChildProcess& bwrap() { return *bwrap_; }
  int status() const { return status_.get(); }

 private:
  std::unique_ptr<InvocationCgroup> cgroup_;  // destroyed last
  std::unique_ptr<ChildProcess> bwrap_;
  UniqueFd status_;
};

}  // namespace relay::runtime
