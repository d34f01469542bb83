#include "http/server.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
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
#include "common/thread_name.h"
#include "common/unique_fd.h"

namespace relay::http {
namespace {

using std::chrono::milliseconds;

// While a connection is open, poll() wakes at least this often so the deadlines (which are on
// the injected Clock, not on poll's own timer) are noticed.
constexpr milliseconds kTick{100};

// The numeric address of an accepted peer, without its port ("" for a unix socket).
std::string peerOf(const sockaddr_storage& address) {
  char text[INET6_ADDRSTRLEN] = {};
  if (address.ss_family == AF_INET) {
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&address)->sin_addr, text,
                sizeof text);
  } else if (address.ss_family == AF_INET6) {
    ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&address)->sin6_addr, text,
                sizeof text);
  }
  return text;
}
constexpr std::size_t kRequestReadChunk = 4096;

// The standard reason phrases (RFC 9110 section 15) of the statuses this server sends; 411 is
// the answer to a request body sent with Transfer-Encoding (request_parser.cpp).
const char* reasonPhrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 202:
      return "Accepted";
    case 204:
      return "No Content";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 409:
      return "Conflict";
    case 411:
      return "Length Required";
    case 413:
      return "Content Too Large";
    case 415:
      return "Unsupported Media Type";
    case 422:
      return "Unprocessable Content";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Status";
  }
}

std::string answer(const HttpReply& reply) {
  std::string out = "HTTP/1.1 " + std::to_string(reply.status) + " " + reasonPhrase(reply.status) +
                    "\r\nContent-Type: " + reply.content_type +
                    "\r\nContent-Length: " + std::to_string(reply.body.size()) +
                    "\r\nCache-Control: no-store\r\nConnection: close\r\n";
  for (const auto& [name, value] : reply.headers) out += name + ": " + value + "\r\n";
  return out + "\r\n" + reply.body;
}

HttpReply errorReply(int status, const std::string& text) {
  return {status, (text.empty() ? std::string(reasonPhrase(status)) : text) + "\n"};
}

std::string errnoText(int error) { return std::strerror(error); }

}  // namespace

struct HttpServer::Client {
  // kHandling: a pool thread is answering; the connection is not polled meanwhile.
  enum class Phase { kReading, kHandling, kWriting, kDraining };
  Client(int descriptor, std::uint64_t number, MonoTime until, std::string address)
      : fd(descriptor), serial(number), deadline(until), peer(std::move(address)) {}

  UniqueFd fd;
  std::uint64_t serial;
  MonoTime deadline;
  MonoTime accepted{};
  std::string peer;
  Phase phase = Phase::kReading;
  bool done = false;
  std::size_t head_bytes = 0;  // once the head was parsed: its length
  ParsedHead head;             // valid once head_bytes > 0
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

Result<std::unique_ptr<HttpServer>> HttpServer::create(const http::Address& address,
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
  server->done_fd_.reset(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!server->wake_fd_.valid() || !server->done_fd_.valid()) {
    return Error::io("eventfd: " + errnoText(errno));
  }
  return server;
}

void HttpServer::handle(std::string path, HttpHandler handler, std::string method) {
  handlers_[std::move(path)][std::move(method)] = std::move(handler);
}

Status HttpServer::start() {
  std::lock_guard lock(thread_mutex_);
  if (thread_.joinable()) return Error::internal("the HTTP server is already running");
  for (std::size_t i = 0; i < settings_.handler_threads; ++i) {
    pool_.push_back(namedThread("relay-http-pool", [this] { poolLoop(); }));
  }
  thread_ = namedThread("relay-http", [this] { serve(); });
  return {};
}

void HttpServer::stop() {
  std::lock_guard lock(thread_mutex_);
  if (!thread_.joinable()) return;
  const std::uint64_t one = 1;
  // An eventfd write of 8 bytes only fails on counter overflow, which one write cannot cause.
  (void)!::write(wake_fd_.get(), &one, sizeof one);
  thread_.join();
  {
    std::lock_guard pool_lock(pool_mutex_);
    pool_stopping_ = true;
    jobs_.clear();
  }
  pool_wake_.notify_all();
  for (std::thread& thread : pool_) thread.join();
  pool_.clear();
}

HttpReply HttpServer::run(const HttpRequest& request) const {
  const auto path = handlers_.find(request.path);
  if (path == handlers_.end()) return errorReply(404, "no such endpoint: " + request.path);
  const auto handler = path->second.find(request.method);
  if (handler == path->second.end()) {
    std::string allow;
    for (const auto& [method, unused] : path->second) allow += (allow.empty() ? "" : ", ") + method;
    HttpReply reply = errorReply(405, "only " + allow + " on " + request.path);
    reply.headers.emplace_back("Allow", allow);
    return reply;
  }
  try {
    return handler->second(request);
  } catch (const std::exception& error) {
    // A throwing handler must not take the server thread (or a pool thread) down with it.
    return errorReply(500, std::string("handler failed: ") + error.what());
  }
}

void HttpServer::reply(Client& client, const HttpReply& reply) {
  client.out = answer(reply);
  client.phase = Client::Phase::kWriting;
  writeTo(client);
}

void HttpServer::dispatch(Client& client) {
  if (client.head.error != 0)
    return reply(client, errorReply(client.head.error, client.head.error_text));
  HttpRequest request = std::move(client.head.request);
  request.peer = client.peer;
  request.body = client.in.substr(client.head_bytes, client.head.content_length);
  if (settings_.handler_threads == 0) return reply(client, run(request));
  client.phase = Client::Phase::kHandling;
  {
    std::lock_guard lock(pool_mutex_);
    jobs_.push_back({client.fd.get(), client.serial, std::move(request)});
  }
  pool_wake_.notify_one();
}

void HttpServer::poolLoop() {
  while (true) {
    Job job;
    {
      std::unique_lock lock(pool_mutex_);
      pool_wake_.wait(lock, [this] { return pool_stopping_ || !jobs_.empty(); });
      if (pool_stopping_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    HttpReply answered = run(job.request);
    {
      std::lock_guard lock(pool_mutex_);
      done_.push_back({job.fd, job.serial, std::move(answered)});
    }
    const std::uint64_t one = 1;
    (void)!::write(done_fd_.get(), &one, sizeof one);
  }
}

void HttpServer::collectDone() {
  std::uint64_t count = 0;
  (void)!::read(done_fd_.get(), &count, sizeof count);
  std::vector<Done> finished;
  {
    std::lock_guard lock(pool_mutex_);
    finished.swap(done_);
  }
  for (Done& done : finished) {
    const auto found = clients_.find(done.fd);
    // The connection may have timed out meanwhile, and its fd gone to a newer client.
    if (found == clients_.end() || found->second->serial != done.serial) continue;
    reply(*found->second, done.reply);
  }
}

void HttpServer::readFrom(Client& client) {
  char buffer[kRequestReadChunk];
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
    if (client.phase != Client::Phase::kReading) continue;
    client.in.append(buffer, static_cast<std::size_t>(n));
    if (client.head_bytes == 0) {
      const std::size_t end = headEnd(client.in);
      if (end == std::string::npos || end > settings_.max_request_bytes) {
        if (client.in.size() > settings_.max_request_bytes) {
          return reply(client,
                       errorReply(431, "request head larger than " +
                                           std::to_string(settings_.max_request_bytes) + " bytes"));
        }
        continue;
      }
      client.head_bytes = end;
      client.head = parseHead(std::string_view(client.in).substr(0, end), settings_.max_headers,
                              settings_.max_body_bytes);
      // The head arrived in time: the request's own deadline now applies.
      client.deadline = client.accepted + settings_.request_timeout;
    }
    if (client.head.error != 0 ||
        client.in.size() >= client.head_bytes + client.head.content_length) {
      return dispatch(client);
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

bool HttpServer::makeRoom() {
  // The oldest connection still reading its head: idle, or trickling its request in.
  Client* oldest = nullptr;
  for (const auto& [fd, client] : clients_) {
    if (client->phase != Client::Phase::kReading || client->head_bytes != 0 || client->done) {
      continue;
    }
    if (oldest == nullptr || client->serial < oldest->serial) oldest = client.get();
  }
  if (oldest == nullptr) return false;
  clients_.erase(oldest->fd.get());
  return true;
}

void HttpServer::acceptClients() {
  while (true) {
    sockaddr_storage address{};
    socklen_t length = sizeof address;
    const int fd = ::accept4(listen_fd_.get(), reinterpret_cast<sockaddr*>(&address), &length,
                             SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      // Out of descriptors: the listening socket stays readable, so back off instead of
      // spinning; the pending connection waits in the backlog.
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        clock_.sleepFor(kTick);
      }
      return;
    }
    if (clients_.size() >= settings_.max_connections && !makeRoom()) {
      ::close(fd);
      continue;
    }
    const MonoTime now = clock_.monotonicNow();
    auto client = std::make_unique<Client>(
        fd, ++next_serial_, now + std::min(settings_.head_timeout, settings_.request_timeout),
        peerOf(address));
    client->accepted = now;
    clients_.emplace(fd, std::move(client));
  }
}

void HttpServer::serve() {
  std::vector<pollfd> fds;
  while (true) {
    fds.clear();
    fds.push_back({wake_fd_.get(), POLLIN, 0});
    fds.push_back({listen_fd_.get(), POLLIN, 0});
    fds.push_back({done_fd_.get(), POLLIN, 0});
    for (const auto& [fd, client] : clients_) {
      const Client::Phase phase = client->phase;
      fds.push_back({fd,
                     static_cast<short>(phase == Client::Phase::kWriting    ? POLLOUT
                                        : phase == Client::Phase::kHandling ? 0
                                                                            : POLLIN),
                     0});
    }
    const int timeout = clients_.empty() ? -1 : static_cast<int>(kTick.count());
    if (::poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) {
      clock_.sleepFor(kTick);  // ENOMEM: try again rather than end the endpoints for good
      continue;
    }
    if (fds[0].revents != 0) break;
    if (fds[1].revents & POLLIN) acceptClients();
    if (fds[2].revents & POLLIN) collectDone();
    for (std::size_t i = 3; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      const auto found = clients_.find(fds[i].fd);
      if (found == clients_.end()) continue;
      Client& client = *found->second;
      if (client.phase == Client::Phase::kWriting) {
        writeTo(client);
      } else if (client.phase != Client::Phase::kHandling) {
        readFrom(client);
      } else if (fds[i].revents & (POLLHUP | POLLERR)) {
        client.done = true;  // gone while a pool thread answers: its reply is dropped
      }
    }
    const MonoTime now = clock_.monotonicNow();
    std::erase_if(clients_, [now](const auto& entry) {
      return entry.second->done || now >= entry.second->deadline;
    });
  }
  clients_.clear();
}

}  // namespace relay::http
