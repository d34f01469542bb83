#pragma once

#include <cstdint>
#include <mutex>
#include <random>
#include <string>

namespace relay {

/// Source of randomness (claim tokens, jitter); injected so tests can make it deterministic.
class Random {
 public:
  virtual ~Random() = default;
  virtual std::uint64_t next() = 0;
  /// 32 lowercase hex digits from two draws: a claim token no replica will repeat.
  std::string token();
};

/// Random seeded from the operating system. Thread-safe.
class SystemRandom final : public Random {
 public:
  SystemRandom();
  std::uint64_t next() override;

 private:
  std::mutex mutex_;
  std::mt19937_64 engine_;
};

}  // namespace relay
