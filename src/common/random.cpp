#include "common/random.h"

#include <sys/random.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace relay {

std::string Random::token() {
  char buffer[33];
  const unsigned long long high = next();
  const unsigned long long low = next();
  std::snprintf(buffer, sizeof buffer, "%016llx%016llx", high, low);
  return buffer;
}

SystemRandom::SystemRandom() {
  std::random_device device;
  std::seed_seq seed{device(), device(), device(), device(), device(), device()};
  engine_.seed(seed);
}

std::uint64_t SystemRandom::next() {
  std::lock_guard lock(mutex_);
  return engine_();
}

std::uint64_t SecureRandom::next() {
  std::uint64_t value = 0;
  auto* bytes = reinterpret_cast<unsigned char*>(&value);
  std::size_t got = 0;
  while (got < sizeof value) {
    const ssize_t n = ::getrandom(bytes + got, sizeof value - got, 0);
    if (n < 0 && errno == EINTR) continue;
    // Without the kernel's randomness no secret can be made: an invariant of the host.
    if (n <= 0) std::abort();
    got += static_cast<std::size_t>(n);
  }
  return value;
}

}  // namespace relay
