#pragma once

#include <memory>
#include <string>
#include <utility>

#include "common/unique_fd.h"
#include "runtime/child_process.h"
#include "runtime/image/image_root.h"
#include "runtime/prewarm_pool.h"
#include "runtime/sandbox/cgroup.h"

namespace relay::runtime {

/// A bwrap sandbox running relay-launcher (or a warm interpreter) in its own fresh, limited
/// cgroup, waiting on stdin for the one invocation it will serve, with the read end of its status
/// descriptor (kStatusFd, docs/runtimes.md "Set-up failures"). Every sandboxed invocation runs in
/// one, prepared ahead of demand or started for it. Destroyed unused: bwrap's group is killed,
/// then the cgroup's remaining processes, then the cgroup is removed. It holds its image root (if
/// any) in use for as long as it lives (docs/runtimes.md "Image roots").
class PrewarmedSandbox final : public WarmSandbox {
 public:
  PrewarmedSandbox(std::unique_ptr<InvocationCgroup> cgroup, std::unique_ptr<ChildProcess> bwrap,
                   UniqueFd status, std::shared_ptr<const image::ImageRoot> image)
      : image_(std::move(image)),
        cgroup_(std::move(cgroup)),
        bwrap_(std::move(bwrap)),
        status_(std::move(status)) {}

  bool alive() const override { return !bwrap_->ended(); }
  InvocationCgroup& cgroup() { return *cgroup_; }
  ChildProcess& bwrap() { return *bwrap_; }
  int status() const { return status_.get(); }
  /// The digest of the image root it runs on; empty on the host's.
  std::string imageDigest() const { return image_ ? image_->digest() : std::string(); }

 private:
  std::shared_ptr<const image::ImageRoot> image_;  // released after everything in it ended
  std::unique_ptr<InvocationCgroup> cgroup_;       // destroyed last of the two
  std::unique_ptr<ChildProcess> bwrap_;
  UniqueFd status_;
};

}  // namespace relay::runtime
