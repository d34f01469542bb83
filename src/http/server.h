#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "common/unique_fd.h"
#include "http/address.h"
#include "http/request_parser.h"

namespace relay::http {

/// What a handler answers; sent with Content-Length, `Cache-Control: no-store` and
/// `Connection: close`, plus `headers` (e.g. Content-Security-Policy, Set-Cookie).
struct HttpReply {
  int status = 200;
  std::string body;
  std::string content_type = "text/plain; charset=utf-8";
  std::vector<std::pair<std::string, std::string>> headers = {};
};

/// Answers one request of a registered path and method. With `handler_threads` 0 it runs on
/// the server's thread and must be quick and must not block on the network (the worker's
/// endpoints read state other threads keep current); with a pool it may block briefly (a
/// Redis round trip), never for long: the connection's deadline keeps running.
using HttpHandler = std::function<HttpReply(const HttpRequest&)>;

/// Limits that keep a slow or hostile client from holding the server.
struct HttpServerSettings {
  /// Request line plus headers; a larger head gets 431.
  std::size_t max_request_bytes = 8 * 1024;
  std::size_t max_headers = 64;
  /// From accept to the last byte of the response; the connection is closed after it.
  std::chrono::milliseconds request_timeout{5'000};
  /// From accept to the end of the request head: a connection that sends nothing (or never
  /// finishes its head) is closed after it, whatever request_timeout says.
  std::chrono::milliseconds head_timeout{1'000};
  /// Connections served at once. At the limit a new connection takes the place of the oldest
  /// one still reading its head (an idle one), so idle connections cannot keep a request such
  /// as GET /healthz out; when every connection is past its head, the new one is closed.
  std::size_t max_connections = 64;
  /// A request body (Content-Length) larger than this gets 413; 0 accepts none.
  std::size_t max_body_bytes = 0;
  /// 0: handlers run on the server's thread. N: on a pool of N threads, so a handler that waits
  /// on Redis does not hold up the other connections.
  std::size_t handler_threads = 0;
};

/// A small HTTP/1.1 server for Relay's own endpoints (/metrics, /healthz, /readyz) and the web
/// console: one poll-based thread (plus an optional handler pool), one request per connection,
/// exact paths (404 otherwise), the registered methods only (405 with Allow otherwise),
/// Content-Length bodies up to a cap. Deadlines come from the injected Clock.
class HttpServer {
 public:
  /// Binds and listens at `address` (a name resolves to its first address that binds). Fails
  /// with kUnavailable naming the address and the reason (in use, not local, no permission...).
  /// Nothing is served until start().
  static Result<std::unique_ptr<HttpServer>> create(const http::Address& address,
                                                    HttpServerSettings settings, Clock& clock);
  /// Stops the thread (as stop()) and closes every socket.
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  /// Registers the handler of `method` on `path` (exact match, e.g. "/metrics"). Call before
  /// start().
  void handle(std::string path, HttpHandler handler, std::string method = "GET");
  /// Starts serving on a thread of its own. Call at most once.
  Status start();
  /// Stops serving: open connections are closed and the threads joined. Thread-safe,
  /// idempotent; blocks until the threads have ended (at most one poll tick, or the handlers
  /// still running).
  void stop();

  /// The address actually bound: the port is the real one when 0 was asked for.
  const http::Address& address() const { return bound_; }

 private:
  struct Client;
  /// A request handed to the pool; `serial` tells a reused fd's new client from the old one.
  struct Job {
    int fd = -1;
    std::uint64_t serial = 0;
    HttpRequest request;
  };
  struct Done {
    int fd = -1;
    std::uint64_t serial = 0;
    HttpReply reply;
  };
  HttpServer(HttpServerSettings settings, Clock& clock);
  void serve();
  void acceptClients();
  /// At the connection limit: closes the oldest connection still reading its head; false
  /// when there is none.
  bool makeRoom();
  void readFrom(Client& client);
  void writeTo(Client& client);
  /// Parses the head; answers at once (errors, inline handlers) or hands the request over.
  void dispatch(Client& client);
  void reply(Client& client, const HttpReply& reply);
  HttpReply run(const HttpRequest& request) const;
  void poolLoop();
  void collectDone();

  HttpServerSettings settings_;
  Clock& clock_;
  http::Address bound_;
  UniqueFd listen_fd_;
  UniqueFd wake_fd_;  // eventfd: stop() writes it to end poll()
  UniqueFd done_fd_;  // eventfd: a pool thread finished a request
  // path -> method -> handler
  std::map<std::string, std::map<std::string, HttpHandler>, std::less<>> handlers_;
  std::map<int, std::unique_ptr<Client>> clients_;  // by fd; only the server thread touches it
  std::uint64_t next_serial_ = 0;

  std::mutex pool_mutex_;
  std::condition_variable pool_wake_;
  std::deque<Job> jobs_;
  std::vector<Done> done_;
  bool pool_stopping_ = false;
  std::vector<std::thread> pool_;

  std::mutex thread_mutex_;
  std::thread thread_;
};

}  // namespace relay::http
