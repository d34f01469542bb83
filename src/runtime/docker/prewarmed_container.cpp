#include "runtime/docker/prewarmed_container.h"

#include <poll.h>

namespace relay::runtime::docker {

PrewarmedContainer::~PrewarmedContainer() {
  if (handed_over_) return;
  if (auto status = api_.remove(id_); !status) {
    warn_("could not remove prewarmed container " + id_ + ": " + status.error().message +
          " (the next start reaps it)");
  }
}

bool PrewarmedContainer::alive() const {
  if (handed_over_ || !attach_.fd.valid() || !attach_.buffered.empty()) return false;
  pollfd fd{attach_.fd.get(), POLLIN | POLLRDHUP, 0};
  return ::poll(&fd, 1, 0) == 0;
}

http::HijackedConnection PrewarmedContainer::handOver() {
  handed_over_ = true;
  return std::move(attach_);
}

}  // namespace relay::runtime::docker
