#include "support/reply_dropping_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace relay::testing {
namespace {

constexpr int kPollMs = 20;  // how often the threads look at the stop flag

sockaddr_in loopback(int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return address;
}

bool writeAll(int fd, const char* data, ssize_t size) {
  while (size > 0) {
    const ssize_t n = ::send(fd, data, static_cast<std::size_t>(size), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= n;
  }
  return true;
}

}  // namespace

Result<std::unique_ptr<ReplyDroppingProxy>> ReplyDroppingProxy::create(int target_port) {
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0) return Error::io(std::string("proxy socket: ") + std::strerror(errno));
  sockaddr_in address = loopback(0);
  socklen_t length = sizeof address;
  if (::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(listener, 16) != 0 ||
      ::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    const std::string why = std::strerror(errno);
    ::close(listener);
    return Error::io("proxy bind/listen: " + why);
  }
  return std::unique_ptr<ReplyDroppingProxy>(
      new ReplyDroppingProxy(listener, ntohs(address.sin_port), target_port));
}

ReplyDroppingProxy::ReplyDroppingProxy(int listener, int port, int target_port)
    : listener_(listener), port_(port), target_port_(target_port) {
  acceptor_ = std::thread([this] { acceptLoop(); });
}

ReplyDroppingProxy::~ReplyDroppingProxy() {
  stopping_ = true;
  acceptor_.join();
  std::lock_guard lock(mutex_);
  for (std::thread& thread : threads_) thread.join();
  ::close(listener_);
}

redis::Endpoint ReplyDroppingProxy::endpoint() const {
  redis::Endpoint endpoint;
  endpoint.host = "127.0.0.1";
  endpoint.port = port_;
  return endpoint;
}

void ReplyDroppingProxy::acceptLoop() {
  while (!stopping_) {
    pollfd waiting{listener_, POLLIN, 0};
    if (::poll(&waiting, 1, kPollMs) <= 0) continue;
    const int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    if (refusing_) {
      ::close(client);
      continue;
    }
    const int server = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const sockaddr_in target = loopback(target_port_);
    if (server < 0 ||
        ::connect(server, reinterpret_cast<const sockaddr*>(&target), sizeof target) != 0) {
      if (server >= 0) ::close(server);
      ::close(client);
      continue;
    }
    std::lock_guard lock(mutex_);
    threads_.emplace_back([this, client, server] { pump(client, server); });
  }
}

void ReplyDroppingProxy::pump(int client, int server) {
  char buffer[16384];
  while (!stopping_) {
    pollfd fds[2] = {{client, POLLIN, 0}, {server, POLLIN, 0}};
    if (::poll(fds, 2, kPollMs) <= 0) continue;
    if (fds[0].revents) {
      const ssize_t n = ::recv(client, buffer, sizeof buffer, 0);
      if (n <= 0 || !writeAll(server, buffer, n)) break;
    }
    if (fds[1].revents) {
      const ssize_t n = ::recv(server, buffer, sizeof buffer, 0);
      if (n <= 0) break;
      if (armed_.exchange(false)) {
        // The request ran on the server; its reply never reaches the client.
        dropped_.fetch_add(1);
        break;
      }
      if (!writeAll(client, buffer, n)) break;
    }
  }
  ::close(client);
  ::close(server);
}

}  // namespace relay::testing
