#pragma once

#include <string>
#include <string_view>

#include "common/result.h"
#include "config/config.h"
#include "http/address.h"

namespace relay::console {

/// Everything `relay console` is configured with (docs/console.md): the
/// worker's own configuration (Redis, stream, group, apps root, runtime) plus where to serve and
/// how to guard it.
struct ConsoleConfig {
  config::WorkerConfig worker;
  http::Address address{"127.0.0.1", 9465};  // RELAY_CONSOLE_ADDR
  std::string token;       // RELAY_CONSOLE_TOKEN; empty: none (only allowed on loopback)
  bool read_only = false;  // --read-only: no mutation endpoint exists
};

/// The shortest RELAY_CONSOLE_TOKEN accepted.
inline constexpr std::size_t kMinTokenLength = 16;

/// Builds it from the environment (as `relay start` reads it) and the flags. Fails with a
/// one-line kInvalidArgument error naming the variable: a bad address, a token shorter than
/// kMinTokenLength, or an address that is not loopback without a token. Never echoes the token.
Result<ConsoleConfig> loadConsoleConfig(const Environment& environment,
                                        const config::ConfigOverrides& overrides, bool read_only);

/// Whether `host` is a loopback address or `localhost` (127.0.0.0/8, ::1).
bool isLoopbackHost(std::string_view host);

}  // namespace relay::console
