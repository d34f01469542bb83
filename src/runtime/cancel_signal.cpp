#include "runtime/cancel_signal.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdint>

namespace relay::runtime {

CancelSignal::CancelSignal() : fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {}

void CancelSignal::request() {
  if (requested_.exchange(true)) return;
  if (fd_.valid()) {
    const std::uint64_t one = 1;
    (void)!::write(fd_.get(), &one, sizeof one);  // level-triggered: never read back
  }
}

}  // namespace relay::runtime
