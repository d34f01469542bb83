#include "observability/http_client.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

#include "common/c_free.h"
#include "common/unique_fd.h"

namespace relay::observability {
namespace {

using std::chrono::milliseconds;

constexpr std::size_t kMaxResponseBytes = 1024 * 1024;
constexpr milliseconds kTick{100};  // poll slices, so the deadline on the Clock is noticed

// Waits until `fd` is ready for `events`; false at the deadline.
bool waitFor(Clock& clock, int fd, short events, MonoTime deadline) {
  while (clock.monotonicNow() < deadline) {
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - clock.monotonicNow());
    pollfd entry{fd, events, 0};
    const int ready =
        ::poll(&entry, 1, static_cast<int>(std::clamp(left, milliseconds(1), kTick).count()));
    if (ready > 0) return true;
    if (ready < 0 && errno != EINTR) return true;  // let the next call report the error
  }
  return false;
}

Result<HttpGetResponse> parseResponse(std::string_view raw, const std::string& where) {
  const std::size_t head_end = raw.find("\r\n\r\n");
  const std::size_t line_end = raw.find("\r\n");
  if (head_end == std::string_view::npos || raw.substr(0, 5) != "HTTP/") {
    return Error::internal(where + " did not answer with HTTP");
  }
  const std::string_view status_line = raw.substr(0, line_end);
  const std::size_t space = status_line.find(' ');
  HttpGetResponse response;
  const std::string_view code =
      space == std::string_view::npos ? std::string_view() : status_line.substr(space + 1, 3);
  const auto [end, error] =
      std::from_chars(code.data(), code.data() + code.size(), response.status);
  if (code.size() != 3 || error != std::errc() || end != code.data() + code.size()) {
    return Error::internal(where + " sent a malformed status line");
  }
  response.body = std::string(raw.substr(head_end + 4));
  return response;
}

}  // namespace

Result<HttpGetResponse> httpGet(const HttpAddress& address, std::string_view path,
                                milliseconds timeout, Clock& clock) {
  const std::string where = address.toString();
  const MonoTime deadline = clock.monotonicNow() + timeout;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(address.port);
  if (const int rc = ::getaddrinfo(address.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    return Error::unavailable("cannot resolve " + where + ": " + ::gai_strerror(rc));
  }
  const CHandle<addrinfo, ::freeaddrinfo> list(found);
  std::string failure = "no address";
  for (const addrinfo* candidate = list.get(); candidate != nullptr;
       candidate = candidate->ai_next) {
    const UniqueFd socket(
        ::socket(candidate->ai_family, candidate->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (socket.get() < 0) {
      failure = std::strerror(errno);
      continue;
    }
    if (::connect(socket.get(), candidate->ai_addr, candidate->ai_addrlen) != 0) {
      if (errno != EINPROGRESS) {
        failure = std::strerror(errno);
        continue;
      }
      if (!waitFor(clock, socket.get(), POLLOUT, deadline)) {
        return Error{ErrorKind::kTimeout, "no connection to " + where + " within the timeout"};
      }
      int error = 0;
      socklen_t length = sizeof error;
      ::getsockopt(socket.get(), SOL_SOCKET, SO_ERROR, &error, &length);
      if (error != 0) {
        failure = std::strerror(error);
        continue;
      }
    }
    const std::string request = "GET " + std::string(path) + " HTTP/1.1\r\nHost: " + where +
                                "\r\nUser-Agent: relay\r\nConnection: close\r\n\r\n";
    std::size_t sent = 0;
    while (sent < request.size()) {
      const ssize_t n =
          ::send(socket.get(), request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n > 0) {
        sent += static_cast<std::size_t>(n);
      } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
        if (!waitFor(clock, socket.get(), POLLOUT, deadline)) {
          return Error{ErrorKind::kTimeout, where + " did not take the request in time"};
        }
      } else {
        return Error::unavailable("sending to " + where + ": " + std::strerror(errno));
      }
    }
    std::string raw;
    char buffer[4096];
    while (true) {
      const ssize_t n = ::recv(socket.get(), buffer, sizeof buffer, 0);
      if (n > 0) {
        raw.append(buffer, static_cast<std::size_t>(n));
        if (raw.size() > kMaxResponseBytes) {
          return Error::internal(where + " sent more than 1 MiB");
        }
      } else if (n == 0) {
        return parseResponse(raw, where);
      } else if (errno == EAGAIN || errno == EINTR) {
        if (!waitFor(clock, socket.get(), POLLIN, deadline)) {
          return Error{ErrorKind::kTimeout, where + " did not answer within the timeout"};
        }
      } else {
        return Error::unavailable("reading from " + where + ": " + std::strerror(errno));
      }
    }
  }
  return Error::unavailable("cannot connect to " + where + ": " + failure);
}

}  // namespace relay::observability
