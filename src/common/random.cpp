#include "common/random.h"

#include <cstdio>

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

}  // namespace relay
