#include "runtime/docker/unix_http_client.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

namespace relay::runtime::docker {
namespace {

constexpr std::size_t kReadChunk = 64 * 1024;

std::string formatRequest(const HttpRequest& request, bool upgrade) {
  std::string out = request.method + " " + request.target + " HTTP/1.1\r\nHost: docker\r\n";
  out += "User-Agent: relay\r\n";
  out += upgrade ? "Connection: Upgrade\r\nUpgrade: tcp\r\n" : "Connection: close\r\n";
  if (!request.body.empty()) out += "Content-Type: application/json\r\n";
  out += "Content-Length: " + std::to_string(request.body.size()) + "\r\n\r\n";
  out += request.body;
  return out;
}

// Milliseconds until `deadline`, rounded up so a poll never returns just before it.
int millisUntil(const Clock& clock, MonoTime deadline) {
  const auto left = deadline - clock.monotonicNow();
  if (left <= std::chrono::nanoseconds::zero()) return 0;
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
  return static_cast<int>(std::min<long long>(ms, INT_MAX));
}

}  // namespace

Result<short> pollUntil(Clock& clock, int fd, short events, MonoTime deadline) {
  while (true) {
    const int timeout = millisUntil(clock, deadline);
    pollfd entry{fd, events, 0};
    const int ready = ::poll(&entry, 1, timeout);
    if (ready > 0) return entry.revents;
    if (ready == 0) {
      if (timeout == 0) return short{0};
      continue;  // woke at the rounded deadline; the Clock decides whether it passed
    }
    if (errno != EINTR) return Error::io(std::string("poll: ") + std::strerror(errno));
  }
}

UnixHttpClient::UnixHttpClient(std::string socket_path, std::string host_label, Clock& clock)
    : socket_path_(std::move(socket_path)), host_label_(std::move(host_label)), clock_(clock) {}

Error UnixHttpClient::lost(std::string_view what, int error_number) const {
  return Error::unavailable("docker daemon at " + host_label_ + ": " + std::string(what) + ": " +
                            std::strerror(error_number));
}

Result<UniqueFd> UnixHttpClient::connect(MonoTime deadline) const {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (socket_path_.size() >= sizeof(address.sun_path)) {
    return Error::invalid("docker socket path " + socket_path_ + " is longer than " +
                          std::to_string(sizeof(address.sun_path) - 1) + " bytes");
  }
  std::memcpy(address.sun_path, socket_path_.c_str(), socket_path_.size() + 1);
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return Error::io(std::string("socket: ") + std::strerror(errno));
  // A unix connect only blocks when the daemon's backlog is full; bound that by the deadline.
  const int ms = std::max(1, millisUntil(clock_, deadline));
  timeval timeout{ms / 1000, (ms % 1000) * 1000};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  int rc;
  do {
    rc = ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof(address));
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    return Error::unavailable("docker daemon not reachable at " + host_label_ + ": " +
                              std::strerror(errno));
  }
  const int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags | O_NONBLOCK) != 0) {
    return Error::io(std::string("fcntl(O_NONBLOCK): ") + std::strerror(errno));
  }
  return fd;
}

Status UnixHttpClient::writeAll(int fd, std::string_view bytes, MonoTime deadline) const {
  while (!bytes.empty()) {
    const ssize_t sent = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (sent >= 0) {
      bytes.remove_prefix(static_cast<std::size_t>(sent));
      continue;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return lost("sending a request", errno);
    auto ready = pollUntil(clock_, fd, POLLOUT, deadline);
    if (!ready) return ready.error();
    if (*ready == 0) {
      return Error{ErrorKind::kTimeout,
                   "docker daemon at " + host_label_ + " did not accept the request in time"};
    }
  }
  return {};
}

Result<std::string> UnixHttpClient::readResponse(int fd, HttpResponseParser& parser,
                                                 MonoTime deadline) const {
  std::string buffer(kReadChunk, '\0');
  while (true) {
    const ssize_t got = ::recv(fd, buffer.data(), buffer.size(), 0);
    if (got > 0) {
      const std::string_view bytes(buffer.data(), static_cast<std::size_t>(got));
      auto used = parser.feed(bytes);
      if (!used) return used.error();
      if (parser.complete()) return std::string(bytes.substr(*used));
      continue;
    }
    if (got == 0) {
      if (auto status = parser.finish(); !status) return status.error();
      return std::string();
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return lost("reading a response", errno);
    auto ready = pollUntil(clock_, fd, POLLIN, deadline);
    if (!ready) return ready.error();
    if (*ready == 0) {
      return Error{ErrorKind::kTimeout,
                   "docker daemon at " + host_label_ + " did not answer in time"};
    }
  }
}

Result<HttpResponse> UnixHttpClient::send(const HttpRequest& request, MonoTime deadline) const {
  auto fd = connect(deadline);
  if (!fd) return fd.error();
  if (auto status = writeAll(fd->get(), formatRequest(request, false), deadline); !status) {
    return status.error();
  }
  HttpResponseParser parser;
  auto rest = readResponse(fd->get(), parser, deadline);
  if (!rest) return rest.error();
  return parser.takeResponse();
}

Result<std::pair<HttpResponse, HijackedConnection>> UnixHttpClient::upgrade(
    const HttpRequest& request, MonoTime deadline) const {
  auto fd = connect(deadline);
  if (!fd) return fd.error();
  if (auto status = writeAll(fd->get(), formatRequest(request, true), deadline); !status) {
    return status.error();
  }
  HttpResponseParser parser(HttpResponseParser::Mode::kHeadersOnly);
  auto rest = readResponse(fd->get(), parser, deadline);
  if (!rest) return rest.error();
  return std::pair{parser.takeResponse(), HijackedConnection{std::move(*fd), std::move(*rest)}};
}

}  // namespace relay::runtime::docker
