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

/// Random from the kernel's CSPRNG (getrandom): for secrets another party must not predict
/// (console session ids, CSRF tokens), which SystemRandom's engine is not made for. Thread-safe.
class SecureRandom final : public Random {
 public:
  std::uint64_t next() override;
};

}  // namespace relay
