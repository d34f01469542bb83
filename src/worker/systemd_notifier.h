#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "common/unique_fd.h"
#include "config/systemd_config.h"

namespace relay::worker {

/// Sends sd_notify(3) states ("READY=1", "WATCHDOG=1", "STOPPING=1", "STATUS=...") as datagrams
/// to NOTIFY_SOCKET, without libsystemd: the protocol is one AF_UNIX datagram per message.
/// Thread-safe (each send is one sendto on a socket of its own).
class SystemdNotifier {
 public:
  static Result<std::unique_ptr<SystemdNotifier>> create(const config::SystemdConfig& config);

  /// One datagram of newline-separated assignments; false when it could not be sent (systemd
  /// gone: the caller carries on, a notification is never a reason to stop).
  bool send(std::string_view state) const;
  const config::SystemdConfig& config() const { return config_; }

 private:
  explicit SystemdNotifier(config::SystemdConfig config, UniqueFd socket)
      : config_(std::move(config)), socket_(std::move(socket)) {}
  config::SystemdConfig config_;
  UniqueFd socket_;
};

/// The watchdog's verdict on the stream reader (pure): alive when it turned within `window`
/// (its loop, a read, a reconnect attempt), or while it waits for room as handlers run (each
/// bounded by its timeout). A reader that stops turning for longer (a deadlock, a call that
/// never returns) is not, and systemd restarts a worker that stays so for WatchdogSec. An
/// unreachable or silent Redis is no hang: its commands time out and the reader turns again.
bool readerAlive(std::chrono::steady_clock::time_point now,
                 std::chrono::steady_clock::time_point last_turn, bool waiting_for_room,
                 std::chrono::microseconds window);

}  // namespace relay::worker
