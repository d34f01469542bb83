#include "console/console_config.h"

#include <arpa/inet.h>

namespace relay::console {

bool isLoopbackHost(std::string_view host) {
  if (host == "localhost") return true;
  const std::string text(host);
  in_addr v4{};
  if (::inet_pton(AF_INET, text.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (::inet_pton(AF_INET6, text.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

Result<ConsoleConfig> loadConsoleConfig(const Environment& environment,
                                        const config::ConfigOverrides& overrides, bool read_only) {
  auto worker = config::loadConfig(environment, overrides, "relay-console");
  if (!worker.ok()) return worker.error();
  ConsoleConfig config;
  config.worker = std::move(worker).value();
  config.read_only = read_only;
  if (const auto address = environment("RELAY_CONSOLE_ADDR"); address && !address->empty()) {
    auto parsed = http::parseAddress(*address);
    if (!parsed.ok()) return Error::invalid("RELAY_CONSOLE_ADDR: " + parsed.error().message);
    config.address = *parsed;
  }
  if (const auto token = environment("RELAY_CONSOLE_TOKEN"); token && !token->empty()) {
    if (token->size() < kMinTokenLength) {
      return Error::invalid("RELAY_CONSOLE_TOKEN: too short (" + std::to_string(token->size()) +
                            " characters); use at least " + std::to_string(kMinTokenLength));
    }
    config.token = *token;
  }
  if (config.token.empty() && !isLoopbackHost(config.address.host)) {
    return Error::invalid("RELAY_CONSOLE_ADDR=" + config.address.toString() +
                          " is not a loopback address: set RELAY_CONSOLE_TOKEN (at least " +
                          std::to_string(kMinTokenLength) +
                          " characters) to serve the console there");
  }
  return config;
}

}  // namespace relay::console
