#include "worker/systemd_notifier.h"

#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <cstring>

namespace relay::worker {

Result<std::unique_ptr<SystemdNotifier>> SystemdNotifier::create(
    const config::SystemdConfig& config) {
  UniqueFd socket(::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!socket.valid()) {
    return Error::unavailable(std::string("NOTIFY_SOCKET: socket: ") + std::strerror(errno));
  }
  return std::unique_ptr<SystemdNotifier>(new SystemdNotifier(config, std::move(socket)));
}

bool SystemdNotifier::send(std::string_view state) const {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string& path = config_.notify_socket;
  std::memcpy(address.sun_path, path.data(), path.size());
  socklen_t length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size());
  if (path[0] == '@') {
    address.sun_path[0] = '\0';  // abstract: no terminating NUL counted
  } else {
    ++length;
  }
  ssize_t sent;
  do {
    sent = ::sendto(socket_.get(), state.data(), state.size(), MSG_NOSIGNAL,
                    reinterpret_cast<const sockaddr*>(&address), length);
  } while (sent < 0 && errno == EINTR);
  return sent == static_cast<ssize_t>(state.size());
}

bool readerAlive(std::chrono::steady_clock::time_point now,
                 std::chrono::steady_clock::time_point last_turn, bool waiting_for_room,
                 std::chrono::microseconds window) {
  return waiting_for_room || now - last_turn <= window;
}

}  // namespace relay::worker
