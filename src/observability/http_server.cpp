#include "observability/http_server.h"

#include <netdb.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <vector>

#include "common/c_free.h"
#include "common/unique_fd.h"

namespace relay::observability {
namespace {

using std::chrono::milliseconds;

// While a connection is open, poll() wakes at least this often so the deadlines (which are on
// the injected Clock, not on poll's own timer) are noticed.
constexpr milliseconds kTick{100};
constexpr std::size_t kReadChunk = 4096;

const char* reasonPhrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Status";
  }
}

// Where the head of a request ends (just past its blank line), or npos while incomplete. Bare
// LF line ends are tolerated (RFC 9112 section 2.2).
std::size_t headEnd(std::string_view buffer) {
  for (std::size_t i = buffer.find('\n'); i != std::string_view::npos;
       i = buffer.find('\n', i + 1)) {
    if (i + 1 < buffer.size() && buffer[i + 1] == '\n') return i + 2;
    if (i + 2 < buffer.size() && buffer[i + 1] == '\r' && buffer[i + 2] == '\n') return i + 3;
  }
  return std::string_view::npos;
}

bool isTokenChar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool isToken(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), isTokenChar);
}

// The request line and headers as far as this server cares: the method and the path.
struct Head {
  int error = 0;  // an HTTP status when the head is unacceptable
  std::string method;
  std::string path;
};

Head parseHead(std::string_view head, std::size_t max_headers) {
  std::vector<std::string_view> lines;
  while (!head.empty()) {
    const std::size_t lf = head.find('\n');
    std::string_view line = head.substr(0, lf);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    head = lf == std::string_view::npos ? std::string_view() : head.substr(lf + 1);
  }
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  if (lines.empty()) return {400, {}, {}};
  const std::string_view request_line = lines.front();
  const std::size_t first = request_line.find(' ');
  const std::size_t second =
      first == std::string_view::npos ? first : request_line.find(' ', first + 1);
  if (second == std::string_view::npos ||
      request_line.find(' ', second + 1) != std::string_view::npos) {
    return {400, {}, {}};
  }
  Head parsed;
  parsed.method = std::string(request_line.substr(0, first));
  std::string_view target = request_line.substr(first + 1, second - first - 1);
  const std::string_view version = request_line.substr(second + 1);
  if (!isToken(parsed.method)) return {400, {}, {}};
  if (version != "HTTP/1.1" && version != "HTTP/1.0") {
    return {version.substr(0, 5) == "HTTP/" ? 505 : 400, {}, {}};
  }
  if (lines.size() - 1 > max_headers) return {431, {}, {}};
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    const std::size_t colon = line.find(':');
    // No obsolete line folding, no whitespace before the colon, a token as the name.
    if (colon == std::string_view::npos || !isToken(line.substr(0, colon))) return {400, {}, {}};
  }
  // Absolute form (`GET http://host/metrics`) is valid HTTP/1.1: keep only its path.
  if (target.substr(0, 7) == "http://") {
    const std::size_t slash = target.find('/', 7);
    target = slash == std::string_view::npos ? std::string_view("/") : target.substr(slash);
  }
  if (target.empty() || target.front() != '/') return {400, {}, {}};
  parsed.path = std::string(target.substr(0, target.find('?')));
  return parsed;
}

std::string errnoText(int error) { return std::strerror(error); }

}  // namespace

struct HttpServer::Client {
  enum class Phase { kReading, kWriting, kDraining };
  explicit Client(int descriptor, MonoTime until) : fd(descriptor), deadline(until) {}

  UniqueFd fd;
  MonoTime deadline;
  Phase phase = Phase::kReading;
  bool done = false;
  std::string in;
  std::string out;
  std::size_t sent = 0;
};

HttpServer::HttpServer(HttpServerSettings settings, Clock& clock)
    : settings_(settings), clock_(clock) {}

HttpServer::~HttpServer() {
  stop();
  clients_.clear();
}

Result<std::unique_ptr<HttpServer>> HttpServer::create(const HttpAddress& address,
                                                       HttpServerSettings settings, Clock& clock) {
  std::unique_ptr<HttpServer> server(new HttpServer(settings, clock));
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(address.port);
  const int resolved = ::getaddrinfo(address.host.c_str(), port.c_str(), &hints, &found);
  if (resolved != 0) {
    return Error::unavailable("cannot listen on " + address.toString() + ": " +
                              ::gai_strerror(resolved));
  }
  const CHandle<addrinfo, ::freeaddrinfo> list(found);
  int last_error = EADDRNOTAVAIL;
  for (const addrinfo* candidate = list.get(); candidate != nullptr;
       candidate = candidate->ai_next) {
    UniqueFd fd(
        ::socket(candidate->ai_family, candidate->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd.valid()) {
      last_error = errno;
      continue;
    }
    const int on = 1;
    (void)::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (::bind(fd.get(), candidate->ai_addr, candidate->ai_addrlen) == 0 &&
        ::listen(fd.get(), 128) == 0) {
      server->listen_fd_ = std::move(fd);
      break;
    }
    last_error = errno;
  }
  if (!server->listen_fd_.valid()) {
    return Error::unavailable("cannot listen on " + address.toString() + ": " +
                              errnoText(last_error));
  }
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  if (::getsockname(server->listen_fd_.get(), reinterpret_cast<sockaddr*>(&bound), &length) != 0) {
    return Error::io("getsockname of " + address.toString() + ": " + errnoText(errno));
  }
  server->bound_ = address;
  server->bound_.port =
      ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<const sockaddr_in6*>(&bound)->sin6_port
                                        : reinterpret_cast<const sockaddr_in*>(&bound)->sin_port);
  server->wake_fd_.reset(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!server->wake_fd_.valid()) return Error::io("eventfd: " + errnoText(errno));
  return server;
}

void HttpServer::handle(std::string path, HttpHandler handler) {
  handlers_[std::move(path)] = std::move(handler);
}

Status HttpServer::start() {
  std::lock_guard lock(thread_mutex_);
  if (thread_.joinable()) return Error::internal("the HTTP server is already running");
  thread_ = std::thread([this] { serve(); });
  return {};
}

void HttpServer::stop() {
  std::lock_guard lock(thread_mutex_);
  if (!thread_.joinable()) return;
  const std::uint64_t one = 1;
  // An eventfd write of 8 bytes only fails on counter overflow, which one write cannot cause.
  (void)!::write(wake_fd_.get(), &one, sizeof one);
  thread_.join();
}

std::string HttpServer::answer(const HttpReply& reply, bool allow_header) const {
  std::string out = "HTTP/1.1 " + std::to_string(reply.status) + " " + reasonPhrase(reply.status) +
                    "\r\nContent-Type: " + reply.content_type +
                    "\r\nContent-Length: " + std::to_string(reply.body.size()) +
                    "\r\nCache-Control: no-store\r\nConnection: close\r\n";
  if (allow_header) out += "Allow: GET\r\n";
  return out + "\r\n" + reply.body;
}

void HttpServer::respond(Client& client, const std::string& head) {
  const Head parsed = parseHead(head, settings_.max_headers);
  bool allow = false;
  HttpReply reply;
  if (parsed.error != 0) {
    reply = {parsed.error, std::string(reasonPhrase(parsed.error)) + "\n"};
  } else if (parsed.method != "GET") {
    reply = {405, "only GET is supported\n"};
    allow = true;
  } else if (const auto handler = handlers_.find(parsed.path); handler == handlers_.end()) {
    reply = {404, "no such endpoint: " + parsed.path + "\n"};
  } else {
    try {
      reply = handler->second();
    } catch (const std::exception& error) {
      // A throwing handler must not take the worker's server thread down with it.
      reply = {500, std::string("handler failed: ") + error.what() + "\n"};
    }
  }
  client.out = answer(reply, allow);
  client.phase = Client::Phase::kWriting;
  writeTo(client);
}

void HttpServer::readFrom(Client& client) {
  char buffer[kReadChunk];
  while (!client.done) {
    const ssize_t n = ::recv(client.fd.get(), buffer, sizeof buffer, 0);
    if (n == 0) {
      client.done = true;  // closed: before a whole request, or after our answer (draining)
      return;
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) client.done = true;
      return;
    }
    if (client.phase == Client::Phase::kDraining) continue;
    client.in.append(buffer, static_cast<std::size_t>(n));
    const std::size_t end = headEnd(client.in);
    if (end != std::string::npos && end <= settings_.max_request_bytes) {
      respond(client, client.in.substr(0, end));
      return;
    }
    if (client.in.size() > settings_.max_request_bytes) {
      client.out = answer({431, "request head larger than " +
                                    std::to_string(settings_.max_request_bytes) + " bytes\n"},
                          false);
      client.phase = Client::Phase::kWriting;
      writeTo(client);
      return;
    }
  }
}

void HttpServer::writeTo(Client& client) {
  while (client.sent < client.out.size()) {
    const ssize_t n = ::send(client.fd.get(), client.out.data() + client.sent,
                             client.out.size() - client.sent, MSG_NOSIGNAL);
    if (n > 0) {
      client.sent += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    client.done = true;
    return;
  }
  // Half-close and read until the client closes: closing with unread request bytes would make
  // the kernel send a reset that can destroy the response still in flight.
  ::shutdown(client.fd.get(), SHUT_WR);
  client.phase = Client::Phase::kDraining;
}

void HttpServer::acceptClients() {
  while (true) {
    const int fd = ::accept4(listen_fd_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      // Out of descriptors: the listening socket stays readable, so back off instead of
      // spinning; the pending connection waits in the backlog.
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        clock_.sleepFor(kTick);
      }
      return;
    }
    if (clients_.size() >= settings_.max_connections) {
      ::close(fd);
      continue;
    }
    clients_.emplace(
        fd, std::make_unique<Client>(fd, clock_.monotonicNow() + settings_.request_timeout));
  }
}

void HttpServer::serve() {
  std::vector<pollfd> fds;
  while (true) {
    fds.clear();
    fds.push_back({wake_fd_.get(), POLLIN, 0});
    fds.push_back({listen_fd_.get(), POLLIN, 0});
    for (const auto& [fd, client] : clients_) {
      fds.push_back(
          {fd, static_cast<short>(client->phase == Client::Phase::kWriting ? POLLOUT : POLLIN), 0});
    }
    const int timeout = clients_.empty() ? -1 : static_cast<int>(kTick.count());
    if (::poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) {
      clock_.sleepFor(kTick);  // ENOMEM: try again rather than end the endpoints for good
      continue;
    }
    if (fds[0].revents != 0) break;
    if (fds[1].revents & POLLIN) acceptClients();
    for (std::size_t i = 2; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      const auto found = clients_.find(fds[i].fd);
      if (found == clients_.end()) continue;
      Client& client = *found->second;
      if (client.phase == Client::Phase::kWriting) {
        writeTo(client);
      } else {
        readFrom(client);
      }
    }
    const MonoTime now = clock_.monotonicNow();
    std::erase_if(clients_, [now](const auto& entry) {
      return entry.second->done || now >= entry.second->deadline;
    });
  }
  clients_.clear();
}

}  // namespace relay::observability
