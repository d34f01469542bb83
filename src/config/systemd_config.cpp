#include "config/systemd_config.h"

#include <sys/un.h>

#include "common/whole_number.h"

namespace relay::config {

Result<std::optional<SystemdConfig>> loadSystemdConfig(const Environment& environment, pid_t self) {
  const auto socket = environment("NOTIFY_SOCKET");
  if (!socket) return std::optional<SystemdConfig>{};
  if (socket->size() < 2 || ((*socket)[0] != '/' && (*socket)[0] != '@') ||
      socket->size() >= sizeof(sockaddr_un{}.sun_path)) {
    return Error::invalid("NOTIFY_SOCKET: expected an absolute socket path or @name");
  }
  SystemdConfig config;
  config.notify_socket = *socket;
  if (const auto usec = environment("WATCHDOG_USEC")) {
    long long value = 0;
    if (!parseWholeNumber(*usec, value) || value <= 0) {
      return Error::invalid("WATCHDOG_USEC: expected a positive whole number of microseconds");
    }
    // WATCHDOG_PID names the process systemd watches; another's variables were inherited.
    long long pid = 0;
    const auto watched = environment("WATCHDOG_PID");
    if (!watched || (parseWholeNumber(*watched, pid) && pid == self)) {
      config.watchdog = std::chrono::microseconds(value);
    }
  }
  return std::optional<SystemdConfig>(std::move(config));
}

}  // namespace relay::config
