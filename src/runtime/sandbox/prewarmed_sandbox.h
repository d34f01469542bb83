#pragma once

#include <memory>
#include <utility>

#include "runtime/child_process.h"
#include "runtime/prewarm_pool.h"
#include "runtime/sandbox/cgroup.h"

namespace relay::runtime {

/// A bwrap sandbox running relay-launcher in its own fresh, limited cgroup, waiting on stdin
/// for the one invocation it will serve. Destroyed unused: bwrap's group is killed, then the
/// cgroup's remaining processes, then the cgroup is removed.
class PrewarmedSandbox final : public WarmSandbox {
 public:
  PrewarmedSandbox(std::unique_ptr<InvocationCgroup> cgroup, std::unique_ptr<ChildProcess> bwrap)
      : cgroup_(std::move(cgroup)), bwrap_(std::move(bwrap)) {}

  bool alive() const override { return !bwrap_->ended(); }
  InvocationCgroup& cgroup() { return *cgroup_; }
  ChildProcess& bwrap() { return *bwrap_; }

 private:
  std::unique_ptr<InvocationCgroup> cgroup_;  // destroyed last
  std::unique_ptr<ChildProcess> bwrap_;
};

}  // namespace relay::runtime
