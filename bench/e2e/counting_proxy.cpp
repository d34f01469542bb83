#include "e2e/counting_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <vector>

namespace relay::bench {
namespace {

// One client connection and its upstream twin.
struct Pair {
  int client = -1;
  int server = -1;
  bool answered = true;  // the server spoke since the client last did: next client bytes = new trip
  std::string pending;   // client bytes not yet parsed into whole commands
};

bool writeAll(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// Reads "<prefix><integer>\r\n" at `at`; advances `at`. False when incomplete.
bool readLine(const std::string& buffer, std::size_t& at, char prefix, long& value) {
  if (at >= buffer.size() || buffer[at] != prefix) return false;
  const std::size_t end = buffer.find("\r\n", at);
  if (end == std::string::npos) return false;
  value = std::strtol(buffer.c_str() + at + 1, nullptr, 10);
  at = end + 2;
  return true;
}

// Parses whole RESP arrays off the front of `buffer`; returns their command names.
std::vector<std::string> takeCommands(std::string& buffer) {
  std::vector<std::string> names;
  std::size_t consumed = 0;
  while (true) {
    std::size_t at = consumed;
    long count = 0;
    if (!readLine(buffer, at, '*', count)) break;
    std::string name;
    bool complete = true;
    for (long i = 0; i < count; ++i) {
      long length = 0;
      if (!readLine(buffer, at, '$', length) || at + length + 2 > buffer.size()) {
        complete = false;
        break;
      }
      if (i == 0) name = buffer.substr(at, static_cast<std::size_t>(length));
      at += static_cast<std::size_t>(length) + 2;
    }
    if (!complete) break;
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    names.push_back(std::move(name));
    consumed = at;
  }
  buffer.erase(0, consumed);
  return names;
}

int connectTo(const std::string& host, int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, host.c_str(), &address.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

}  // namespace

CountingProxy::Counts CountingProxy::Counts::operator-(const Counts& earlier) const {
  Counts delta{commands - earlier.commands, round_trips - earlier.round_trips, by_command};
  for (const auto& [name, count] : earlier.by_command) delta.by_command[name] -= count;
  return delta;
}

std::unique_ptr<CountingProxy> CountingProxy::start(const std::string& host, int port) {
  std::unique_ptr<CountingProxy> proxy(new CountingProxy());
  proxy->upstream_host_ = host;
  proxy->upstream_port_ = port;
  proxy->listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (::bind(proxy->listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(proxy->listen_fd_, 64) != 0 ||
      ::getsockname(proxy->listen_fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    return nullptr;
  }
  proxy->port_ = ntohs(address.sin_port);
  proxy->wake_fd_ = ::eventfd(0, EFD_CLOEXEC);
  proxy->thread_ = std::thread([p = proxy.get()] { p->loop(); });
  return proxy;
}

CountingProxy::~CountingProxy() {
  if (thread_.joinable()) {
    const std::uint64_t one = 1;
    (void)::write(wake_fd_, &one, sizeof one);
    thread_.join();
  }
  if (wake_fd_ >= 0) ::close(wake_fd_);
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

CountingProxy::Counts CountingProxy::counts() const {
  std::lock_guard lock(mutex_);
  return counts_;
}

void CountingProxy::loop() {
  std::vector<Pair> pairs;
  std::vector<char> buffer(256 * 1024);
  while (true) {
    std::vector<pollfd> fds = {{wake_fd_, POLLIN, 0}, {listen_fd_, POLLIN, 0}};
    for (const Pair& pair : pairs) {
      fds.push_back({pair.client, POLLIN, 0});
      fds.push_back({pair.server, POLLIN, 0});
    }
    if (::poll(fds.data(), fds.size(), -1) < 0) continue;
    if (fds[0].revents != 0) break;
    if (fds[1].revents != 0) {
      const int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      const int server = client >= 0 ? connectTo(upstream_host_, upstream_port_) : -1;
      if (server >= 0) {
        const int one = 1;
        ::setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        pairs.push_back({client, server, true, {}});
      } else if (client >= 0) {
        ::close(client);
      }
    }
    std::vector<bool> closed(pairs.size(), false);
    for (std::size_t i = 0; i < pairs.size() && 2 + 2 * i + 1 < fds.size(); ++i) {
      Pair& pair = pairs[i];
      for (const bool from_client : {true, false}) {
        const pollfd& fd = fds[2 + 2 * i + (from_client ? 0 : 1)];
        if (fd.revents == 0 || closed[i]) continue;
        const ssize_t n = ::read(fd.fd, buffer.data(), buffer.size());
        if (n <= 0 ||
            !writeAll(from_client ? pair.server : pair.client, buffer.data(), std::size_t(n))) {
          closed[i] = true;
          continue;
        }
        if (!from_client) {
          pair.answered = true;
          continue;
        }
        pair.pending.append(buffer.data(), static_cast<std::size_t>(n));
        const std::vector<std::string> names = takeCommands(pair.pending);
        std::lock_guard lock(mutex_);
        if (pair.answered) ++counts_.round_trips;
        pair.answered = false;
        counts_.commands += static_cast<long>(names.size());
        for (const std::string& name : names) ++counts_.by_command[name];
      }
    }
    for (std::size_t i = pairs.size(); i-- > 0;) {
      if (!closed[i]) continue;
      ::close(pairs[i].client);
      ::close(pairs[i].server);
      pairs.erase(pairs.begin() + static_cast<long>(i));
    }
  }
  for (const Pair& pair : pairs) {
    ::close(pair.client);
    ::close(pair.server);
  }
}

}  // namespace relay::bench
