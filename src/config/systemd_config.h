#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>

#include "common/environment.h"
#include "common/result.h"

namespace relay::config {

/// What systemd told a Type=notify service through its environment (docs/deployment.md
/// "systemd"): where to send notifications, and the watchdog interval when WatchdogSec= is set.
struct SystemdConfig {
  std::string notify_socket;  // NOTIFY_SOCKET: a path, or `@name` for an abstract socket
  /// WATCHDOG_USEC, when WATCHDOG_PID is unset or names this process.
  std::optional<std::chrono::microseconds> watchdog;
};

/// NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID; nullopt when NOTIFY_SOCKET is unset (not a
/// notify service). A socket that is neither an absolute path nor `@name`, or a WATCHDOG_USEC
/// that is not a positive whole number, is a one-line error naming the variable.
Result<std::optional<SystemdConfig>> loadSystemdConfig(const Environment& environment, pid_t self);

}  // namespace relay::config
