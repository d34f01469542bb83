#include "http/client.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "common/c_free.h"
#include "common/poll.h"

namespace relay::http {
namespace {

constexpr std::size_t kReadChunk = 64 * 1024;

std::string describe(const Endpoint& endpoint) {
  if (const auto* address = std::get_if<Address>(&endpoint)) return address->toString();
  return std::get<UnixSocket>(endpoint).path;
}

std::string formatRequest(const Request& request, std::string_view host, bool upgrade) {
  std::string out = request.method + " " + request.target + " HTTP/1.1\r\nHost: ";
  out += host;
  out += "\r\nUser-Agent: relay\r\n";
  out += upgrade ? "Connection: Upgrade\r\nUpgrade: tcp\r\n" : "Connection: close\r\n";
  if (!request.body.empty()) out += "Content-Type: application/json\r\n";
  out += "Content-Length: " + std::to_string(request.body.size()) + "\r\n\r\n";
  out += request.body;
  return out;
}

}  // namespace

Client::Client(Endpoint endpoint, Clock& clock, std::string peer)
    : endpoint_(std::move(endpoint)),
      clock_(clock),
      peer_(peer.empty() ? describe(endpoint_) : std::move(peer)) {}

Error Client::lost(std::string_view what, int error_number) const {
  return Error::unavailable(peer_ + ": " + std::string(what) + ": " + std::strerror(error_number));
}

Result<UniqueFd> Client::connect(MonoTime deadline) const {
  if (const auto* address = std::get_if<Address>(&endpoint_)) return connectTcp(*address, deadline);
  return connectUnix(std::get<UnixSocket>(endpoint_), deadline);
}

Result<UniqueFd> Client::connectUnix(const UnixSocket& socket, MonoTime deadline) const {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (socket.path.size() >= sizeof(address.sun_path)) {
    return Error::invalid("socket path " + socket.path + " is longer than " +
                          std::to_string(sizeof(address.sun_path) - 1) + " bytes");
  }
  std::memcpy(address.sun_path, socket.path.c_str(), socket.path.size() + 1);
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return Error::io(std::string("socket: ") + std::strerror(errno));
  // A unix connect only blocks when the peer's backlog is full; bound that by the deadline.
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - clock_.monotonicNow());
  const long long ms = std::clamp<long long>(left.count(), 1, INT_MAX);
  timeval timeout{static_cast<time_t>(ms / 1000), static_cast<suseconds_t>((ms % 1000) * 1000)};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
  int rc;
  do {
    rc = ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&address), sizeof(address));
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    return Error::unavailable("cannot connect to " + peer_ + ": " + std::strerror(errno));
  }
  const int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags | O_NONBLOCK) != 0) {
    return Error::io(std::string("fcntl(O_NONBLOCK): ") + std::strerror(errno));
  }
  return fd;
}

Result<UniqueFd> Client::connectTcp(const Address& address, MonoTime deadline) const {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(address.port);
  if (const int rc = ::getaddrinfo(address.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    return Error::unavailable("cannot resolve " + peer_ + ": " + ::gai_strerror(rc));
  }
  const CHandle<addrinfo, ::freeaddrinfo> list(found);
  std::string failure = "no address";
  for (const addrinfo* candidate = list.get(); candidate != nullptr;
       candidate = candidate->ai_next) {
    UniqueFd fd(
        ::socket(candidate->ai_family, candidate->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd.valid()) {
      failure = std::strerror(errno);
      continue;
    }
    if (::connect(fd.get(), candidate->ai_addr, candidate->ai_addrlen) == 0) return fd;
    if (errno != EINPROGRESS) {
      failure = std::strerror(errno);
      continue;
    }
    auto ready = pollUntil(clock_, fd.get(), POLLOUT, deadline);
    if (!ready) return ready.error();
    if (*ready == 0) {
      return Error{ErrorKind::kTimeout, "no connection to " + peer_ + " within the timeout"};
    }
    int error = 0;
    socklen_t length = sizeof error;
    ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &length);
    if (error == 0) return fd;
    failure = std::strerror(error);
  }
  return Error::unavailable("cannot connect to " + peer_ + ": " + failure);
}

Status Client::writeAll(int fd, std::string_view bytes, MonoTime deadline) const {
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
      return Error{ErrorKind::kTimeout, peer_ + " did not accept the request in time"};
    }
  }
  return {};
}

Result<std::string> Client::readResponse(int fd, ResponseParser& parser, MonoTime deadline) const {
  const auto malformed = [this](const Error& error) {
    return Error{error.kind, peer_ + ": " + error.message};
  };
  std::string buffer(kReadChunk, '\0');
  while (true) {
    const ssize_t got = ::recv(fd, buffer.data(), buffer.size(), 0);
    if (got > 0) {
      const std::string_view bytes(buffer.data(), static_cast<std::size_t>(got));
      auto used = parser.feed(bytes);
      if (!used) return malformed(used.error());
      if (parser.complete()) return std::string(bytes.substr(*used));
      continue;
    }
    if (got == 0) {
      if (auto status = parser.finish(); !status) return malformed(status.error());
      return std::string();
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return lost("reading a response", errno);
    auto ready = pollUntil(clock_, fd, POLLIN, deadline);
    if (!ready) return ready.error();
    if (*ready == 0) return Error{ErrorKind::kTimeout, peer_ + " did not answer in time"};
  }
}

Result<std::pair<Response, HijackedConnection>> Client::exchange(
    const Request& request, bool upgrade, MonoTime deadline, ResponseParser::BodySink sink) const {
  auto fd = connect(deadline);
  if (!fd) return fd.error();
  const auto* address = std::get_if<Address>(&endpoint_);
  const std::string host = address != nullptr ? address->toString() : "localhost";
  if (auto status = writeAll(fd->get(), formatRequest(request, host, upgrade), deadline); !status) {
    return status.error();
  }
  ResponseParser parser(upgrade ? ResponseParser::Mode::kHeadersOnly : ResponseParser::Mode::kFull);
  if (sink) parser.streamBodyTo(std::move(sink));
  auto rest = readResponse(fd->get(), parser, deadline);
  if (!rest) return rest.error();
  return std::pair{parser.takeResponse(), HijackedConnection{std::move(*fd), std::move(*rest)}};
}

Result<Response> Client::send(const Request& request, MonoTime deadline) const {
  auto exchanged = exchange(request, false, deadline);
  if (!exchanged) return exchanged.error();
  return std::move(exchanged->first);
}

Result<Response> Client::send(const Request& request, MonoTime deadline,
                              ResponseParser::BodySink sink) const {
  auto exchanged = exchange(request, false, deadline, std::move(sink));
  if (!exchanged) return exchanged.error();
  return std::move(exchanged->first);
}

Result<std::pair<Response, HijackedConnection>> Client::upgrade(const Request& request,
                                                                MonoTime deadline) const {
  return exchange(request, true, deadline);
}

Result<Response> get(const Address& address, std::string_view path,
                     std::chrono::milliseconds timeout, Clock& clock) {
  return Client(address, clock)
      .send({"GET", std::string(path), {}}, clock.monotonicNow() + timeout);
}

}  // namespace relay::http
