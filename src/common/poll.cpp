#include "common/poll.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

namespace relay {

Result<short> pollUntil(Clock& clock, int fd, short events, MonoTime deadline) {
  while (true) {
    const auto left = deadline - clock.monotonicNow();
    // Rounded up, so a slice never ends just before the deadline and spins.
    const auto slice =
        left <= std::chrono::nanoseconds::zero()
            ? std::chrono::milliseconds::zero()
            : std::min(std::chrono::ceil<std::chrono::milliseconds>(left), kPollSlice);
    pollfd entry{fd, events, 0};
    const int ready = ::poll(&entry, 1, static_cast<int>(slice.count()));
    if (ready > 0) return entry.revents;
    if (ready == 0) {
      if (slice.count() == 0) return short{0};
      continue;  // the Clock decides whether the deadline passed
    }
    if (errno != EINTR) return Error::io(std::string("poll: ") + std::strerror(errno));
  }
}

}  // namespace relay
