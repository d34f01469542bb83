#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/clock.h"
#include "common/result.h"
#include "common/unique_fd.h"
#include "observability/http_address.h"

namespace relay::observability {

/// What a handler answers; sent with Content-Length and `Connection: close`.
struct HttpReply {
  int status = 200;
  std::string body;
  std::string content_type = "text/plain; charset=utf-8";
};

/// Answers GET of one path. Runs on the server's thread: it must be quick and must not block
/// on the network (the handlers read state other threads keep current).
using HttpHandler = std::function<HttpReply()>;

/// Limits that keep a slow or hostile client from holding the server.
struct HttpServerSettings {
  /// Request line plus headers; a larger head gets 431.
  std::size_t max_request_bytes = 8 * 1024;
  std::size_t max_headers = 64;
  /// From accept to the last byte of the response; the connection is closed after it.
  std::chrono::milliseconds request_timeout{5'000};
  /// Connections served at once; more are accepted and closed at once.
  std::size_t max_connections = 64;
};

/// A small HTTP/1.1 server for Relay's own endpoints (/metrics, /healthz, /readyz): one thread,
/// poll-based, one request per connection, GET only (405 otherwise), 404 for unknown paths.
/// Query strings are ignored. Deadlines come from the injected Clock.
class HttpServer {
 public:
  /// Binds and listens at `address` (a name resolves to its first address that binds). Fails
  /// with kUnavailable naming the address and the reason (in use, not local, no permission...).
  /// Nothing is served until start().
  static Result<std::unique_ptr<HttpServer>> create(const HttpAddress& address,
                                                    HttpServerSettings settings, Clock& clock);
  /// Stops the thread (as stop()) and closes every socket.
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  /// Registers the handler of `path` (exact match, e.g. "/metrics"). Call before start().
  void handle(std::string path, HttpHandler handler);
  /// Starts serving on a thread of its own. Call at most once.
  Status start();
  /// Stops serving: open connections are closed and the thread joined. Thread-safe, idempotent;
  /// blocks until the thread has ended (at most one poll tick).
  void stop();

  /// The address actually bound: the port is the real one when 0 was asked for.
  const HttpAddress& address() const { return bound_; }

 private:
  struct Client;
  HttpServer(HttpServerSettings settings, Clock& clock);
  void serve();
  void acceptClients();
  void readFrom(Client& client);
  void writeTo(Client& client);
  void respond(Client& client, const std::string& head);
  std::string answer(const HttpReply& reply, bool allow_header) const;

  HttpServerSettings settings_;
  Clock& clock_;
  HttpAddress bound_;
  UniqueFd listen_fd_;
  UniqueFd wake_fd_;  // eventfd: stop() writes it to end poll()
  std::map<std::string, HttpHandler, std::less<>> handlers_;
  std::map<int, std::unique_ptr<Client>> clients_;  // by fd; only the server thread touches it
  std::mutex thread_mutex_;
  std::thread thread_;
};

}  // namespace relay::observability
