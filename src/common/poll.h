#pragma once

#include <chrono>

#include "common/clock.h"
#include "common/result.h"

namespace relay {

/// The longest one poll(2) call of pollUntil() waits before it asks the Clock again, so a clock
/// that is moved (a test's FakeClock) is noticed.
inline constexpr std::chrono::milliseconds kPollSlice{100};

/// Blocks until `fd` is ready for `events` (poll(2) flags) or `deadline` on `clock` passes: the
/// one wait-with-a-deadline of every non-blocking socket Relay talks through. Returns the
/// revents (POLLHUP/POLLERR included), 0 once the deadline has passed with nothing ready (the fd
/// is still asked once at the deadline), or an Error (kIo) from poll.
Result<short> pollUntil(Clock& clock, int fd, short events, MonoTime deadline);

}  // namespace relay
