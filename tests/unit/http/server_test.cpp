// The HTTP server behind /metrics, /healthz and /readyz, over real loopback sockets: GET only,
// 404 for unknown paths, request limits, deadlines on the injected clock.
#include "http/server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/system_clock.h"
#include "fakes/fake_clock.h"
#include "http/client.h"

namespace relay::http {
namespace {

using std::chrono::seconds;

/// A raw TCP client: sends bytes as given and reads until the server closes (bounded by a
/// real-time receive timeout, so a hung server fails the test instead of hanging it).
class RawClient {
 public:
  explicit RawClient(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval timeout{10, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
      throw std::runtime_error("connect failed");
    }
  }
  ~RawClient() { ::close(fd_); }
  void send(const std::string& bytes) {
    ASSERT_EQ(::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
  }
  /// Everything until EOF; "<timeout>" if the server kept the connection open too long.
  std::string readAll() {
    std::string out;
    char buffer[4096];
    while (true) {
      const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n == 0) return out;
      if (n < 0) return errno == EAGAIN ? "<timeout>" : out;
      out.append(buffer, static_cast<std::size_t>(n));
    }
  }

 private:
  int fd_;
};

class HttpServerTest : public ::testing::Test {
 protected:
  void start(HttpServerSettings settings = {}, Clock* clock = nullptr) {
    auto created = HttpServer::create({"127.0.0.1", 0}, settings, clock ? *clock : clock_);
    ASSERT_TRUE(created.ok()) << created.error().message;
    server_ = std::move(created).value();
    server_->handle("/metrics", [](const HttpRequest&) {
      return HttpReply{200, "relay_up 1\n", "text/plain; version=0.0.4; charset=utf-8"};
    });
    server_->handle("/healthz", [this](const http::HttpRequest&) {
      return HttpReply{health_.load(), "reason\n"};
    });
    server_->handle(
        "/boom", [](const HttpRequest&) -> HttpReply { throw std::runtime_error("handler bug"); });
    ASSERT_TRUE(server_->start().ok());
  }
  // A server on a free loopback port with only the routes `routes` registers, started.
  void startWith(HttpServerSettings settings, const std::function<void(HttpServer&)>& routes) {
    auto created = HttpServer::create({"127.0.0.1", 0}, settings, clock_);
    ASSERT_TRUE(created.ok()) << created.error().message;
    server_ = std::move(created).value();
    routes(*server_);
    ASSERT_TRUE(server_->start().ok());
  }
  // POST /echo answers the request's body; bodies up to `max_body_bytes`.
  void startEcho(std::size_t max_body_bytes) {
    HttpServerSettings settings;
    settings.max_body_bytes = max_body_bytes;
    startWith(settings, [](HttpServer& server) {
      server.handle(
          "/echo",
          [](const HttpRequest& request) {
            return HttpReply{200, request.body};
          },
          "POST");
    });
  }
  int port() const { return server_->address().port; }
  std::string exchange(const std::string& request) {
    RawClient client(port());
    client.send(request);
    return client.readAll();
  }

  SystemClock clock_;
  std::atomic<int> health_{200};
  std::unique_ptr<HttpServer> server_;
};

TEST_F(HttpServerTest, PortZeroBindsAFreePortThatIsReportedBack) {
  start();
  EXPECT_GT(port(), 0);
  EXPECT_EQ(server_->address().host, "127.0.0.1");
}

TEST_F(HttpServerTest, ServesARegisteredPathWithLengthTypeAndClose) {
  start();
  const std::string response = exchange("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(response.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << response;
  EXPECT_NE(response.find("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"),
            std::string::npos);
  EXPECT_NE(response.find("Content-Length: 11\r\n"), std::string::npos);
  EXPECT_NE(response.find("Connection: close\r\n"), std::string::npos);
  EXPECT_EQ(response.substr(response.size() - 11), "relay_up 1\n");
}

TEST_F(HttpServerTest, TheHandlerDecidesTheStatus) {
  start();
  health_ = 503;
  auto response = http::get(server_->address(), "/healthz", seconds(10), clock_);
  ASSERT_TRUE(response.ok()) << response.error().message;
  EXPECT_EQ(response->status, 503);
  EXPECT_EQ(response->body, "reason\n");
  health_ = 200;
  response = http::get(server_->address(), "/healthz", seconds(10), clock_);
  ASSERT_TRUE(response.ok());
  EXPECT_EQ(response->status, 200);
}

TEST_F(HttpServerTest, UnknownPathIs404) {
  start();
  EXPECT_EQ(exchange("GET /nope HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 404 ", 0), 0u);
  EXPECT_EQ(exchange("GET /metrics/ HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 404 ", 0), 0u);
}

TEST_F(HttpServerTest, AQueryStringDoesNotChangeTheRoute) {
  start();
  EXPECT_EQ(exchange("GET /metrics?x=1 HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 200 ", 0), 0u);
}

TEST_F(HttpServerTest, HandlersSeeTheMethodQueryHeadersAndBody) {
  HttpServerSettings settings;
  settings.max_body_bytes = 64;
  startWith(settings, [](HttpServer& server) {
    server.handle(
        "/echo",
        [](const HttpRequest& request) {
          const std::string* token = request.header("X-Token");
          HttpReply reply{200, request.method + "|" + request.param("q").value_or("<none>") + "|" +
                                   (token ? *token : "<none>") + "|" + request.body};
          reply.headers.emplace_back("X-Extra", "yes");
          return reply;
        },
        "POST");
  });
  const std::string response = exchange(
      "POST /echo?q=a%20b+c&x=1 HTTP/1.1\r\nx-token:  secret \r\nContent-Length: 5\r\n\r\nhello");
  EXPECT_EQ(response.rfind("HTTP/1.1 200 ", 0), 0u) << response;
  EXPECT_NE(response.find("X-Extra: yes\r\n"), std::string::npos);
  EXPECT_EQ(response.substr(response.find("\r\n\r\n") + 4), "POST|a b c|secret|hello");
}

TEST_F(HttpServerTest, ABodyArrivingAfterTheHeadIsWaitedFor) {
  startEcho(64);
  RawClient client(port());
  client.send("POST /echo HTTP/1.1\r\nContent-Length: 10\r\n\r\n01234");
  client.send("56789");
  const std::string response = client.readAll();
  EXPECT_EQ(response.substr(response.size() - 10), "0123456789") << response;
}

TEST_F(HttpServerTest, ABodyLargerThanTheCapIs413AndChunkedIs411) {
  startEcho(8);
  EXPECT_EQ(exchange("POST /echo HTTP/1.1\r\nContent-Length: 9\r\n\r\n123456789")
                .rfind("HTTP/1.1 413 ", 0),
            0u);
  EXPECT_EQ(exchange("POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n")
                .rfind("HTTP/1.1 411 Length Required\r\n", 0),
            0u);
  EXPECT_EQ(exchange("POST /echo HTTP/1.1\r\nContent-Length: x\r\n\r\n").rfind("HTTP/1.1 400 ", 0),
            0u);
}

TEST_F(HttpServerTest, TheAllowHeaderListsTheRegisteredMethods) {
  startWith({}, [](HttpServer& server) {
    const HttpHandler ok = [](const HttpRequest&) { return HttpReply{200, "ok"}; };
    server.handle("/thing", ok);
    server.handle("/thing", ok, "POST");
  });
  const std::string response = exchange("DELETE /thing HTTP/1.1\r\n\r\n");
  EXPECT_EQ(response.rfind("HTTP/1.1 405 ", 0), 0u);
  EXPECT_NE(response.find("Allow: GET, POST\r\n"), std::string::npos) << response;
  EXPECT_EQ(exchange("POST /thing HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 200 ", 0), 0u);
}

TEST_F(HttpServerTest, WithAHandlerPoolASlowHandlerDoesNotHoldUpOtherRequests) {
  HttpServerSettings settings;
  settings.handler_threads = 2;
  std::mutex mutex;
  std::condition_variable changed;
  bool release = false;
  startWith(settings, [&](HttpServer& server) {
    server.handle("/slow", [&](const HttpRequest&) {
      std::unique_lock lock(mutex);
      changed.wait(lock, [&] { return release; });
      return HttpReply{200, "slow"};
    });
    server.handle("/fast", [](const HttpRequest&) { return HttpReply{200, "fast"}; });
  });
  RawClient slow(port());
  slow.send("GET /slow HTTP/1.1\r\n\r\n");
  const std::string fast = exchange("GET /fast HTTP/1.1\r\n\r\n");
  EXPECT_EQ(fast.substr(fast.size() - 4), "fast");
  {
    std::lock_guard lock(mutex);
    release = true;
  }
  changed.notify_all();
  const std::string answered = slow.readAll();
  EXPECT_EQ(answered.substr(answered.size() - 4), "slow") << answered;
}

TEST(HttpRequestParam, DecodesPercentEscapesAndPlusAndTakesTheFirstOccurrence) {
  HttpRequest request;
  request.query = "a=1&text=%3Cscript%3E+x&a=2&empty=&flag&bad=%zz%4";
  EXPECT_EQ(request.param("a"), "1");
  EXPECT_EQ(request.param("text"), "<script> x");
  EXPECT_EQ(request.param("empty"), "");
  EXPECT_EQ(request.param("flag"), "");
  EXPECT_EQ(request.param("bad"), "%zz%4");
  EXPECT_EQ(request.param("missing"), std::nullopt);
}

TEST_F(HttpServerTest, AbsoluteFormTargetsAreServedByTheirPath) {
  start();
  EXPECT_EQ(exchange("GET http://localhost:1/metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 200 ", 0),
            0u);
}

TEST_F(HttpServerTest, EveryMethodButGetIs405WithAllow) {
  start();
  for (const char* method : {"POST", "PUT", "DELETE", "HEAD", "OPTIONS", "PATCH"}) {
    const std::string response =
        exchange(std::string(method) + " /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
    EXPECT_EQ(response.rfind("HTTP/1.1 405 ", 0), 0u) << method << ": " << response;
    EXPECT_NE(response.find("Allow: GET\r\n"), std::string::npos);
  }
}

TEST_F(HttpServerTest, MalformedRequestsAre400) {
  start();
  for (const std::string request :
       {"GARBAGE\r\n\r\n", "GET /metrics\r\n\r\n", "GET  /metrics HTTP/1.1\r\n\r\n",
        "GET metrics HTTP/1.1\r\n\r\n", "GET /metrics HTTP/1.1\r\nNoColon\r\n\r\n",
        "GET /metrics HTTP/1.1\r\nBad Name: x\r\n\r\n",
        "GET /metrics HTTP/1.1\r\nA: b\r\n folded\r\n\r\n", "G(T /metrics HTTP/1.1\r\n\r\n",
        "GET /metrics HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"}) {
    EXPECT_EQ(exchange(request).rfind("HTTP/1.1 400 ", 0), 0u) << request;
  }
}

TEST_F(HttpServerTest, OtherHttpVersionsAre505) {
  start();
  EXPECT_EQ(exchange("GET /metrics HTTP/2.0\r\n\r\n").rfind("HTTP/1.1 505 ", 0), 0u);
}

TEST_F(HttpServerTest, Http10AndBareLineFeedsAreAccepted) {
  start();
  EXPECT_EQ(exchange("GET /metrics HTTP/1.0\n\n").rfind("HTTP/1.1 200 ", 0), 0u);
}

TEST_F(HttpServerTest, ARequestArrivingByteByByteIsServed) {
  start();
  RawClient client(port());
  for (char c : std::string("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")) {
    client.send(std::string(1, c));
  }
  EXPECT_EQ(client.readAll().rfind("HTTP/1.1 200 ", 0), 0u);
}

TEST_F(HttpServerTest, AnOversizedHeadIs431) {
  HttpServerSettings settings;
  settings.max_request_bytes = 256;
  start(settings);
  const std::string response =
      exchange("GET /metrics HTTP/1.1\r\nX-Pad: " + std::string(1000, 'a') + "\r\n\r\n");
  EXPECT_EQ(response.rfind("HTTP/1.1 431 ", 0), 0u) << response;
}

TEST_F(HttpServerTest, AnOversizedHeadWithoutEndIs431Too) {
  HttpServerSettings settings;
  settings.max_request_bytes = 256;
  start(settings);
  RawClient client(port());
  client.send("GET /metrics HTTP/1.1\r\nX-Pad: " + std::string(1000, 'a'));
  EXPECT_EQ(client.readAll().rfind("HTTP/1.1 431 ", 0), 0u);
}

TEST_F(HttpServerTest, TooManyHeadersAre431) {
  HttpServerSettings settings;
  settings.max_headers = 4;
  start(settings);
  std::string request = "GET /metrics HTTP/1.1\r\n";
  for (int i = 0; i < 5; ++i) request += "X-H" + std::to_string(i) + ": v\r\n";
  EXPECT_EQ(exchange(request + "\r\n").rfind("HTTP/1.1 431 ", 0), 0u);
}

TEST_F(HttpServerTest, AThrowingHandlerIs500AndTheServerKeepsServing) {
  start();
  const std::string response = exchange("GET /boom HTTP/1.1\r\n\r\n");
  EXPECT_EQ(response.rfind("HTTP/1.1 500 ", 0), 0u);
  EXPECT_NE(response.find("handler bug"), std::string::npos);
  EXPECT_EQ(exchange("GET /metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 200 ", 0), 0u);
}

TEST_F(HttpServerTest, AnIdleConnectionIsClosedAtTheDeadlineOfTheInjectedClock) {
  relay::testing::FakeClock clock;
  HttpServerSettings settings;
  settings.request_timeout = seconds(5);
  start(settings, &clock);
  RawClient idle(port());
  idle.send("GET /metrics HTTP/1.1\r\n");  // never finished
  // Other clients are served meanwhile: one slow client does not hold the server.
  EXPECT_EQ(exchange("GET /metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 200 ", 0), 0u);
  clock.advance(seconds(6));
  EXPECT_EQ(idle.readAll(), "");  // closed without an answer, well before the 10 s read bound
}

TEST_F(HttpServerTest, AtTheLimitTheOldestConnectionStillReadingItsHeadMakesRoom) {
  HttpServerSettings settings;
  settings.max_connections = 2;
  start(settings);
  RawClient first(port());
  first.send("GET /metrics HTTP/1.1\r\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  RawClient second(port());
  second.send("GET /metrics HTTP/1.1\r\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  RawClient third(port());
  third.send("GET /metrics HTTP/1.1\r\n\r\n");
  EXPECT_EQ(third.readAll().rfind("HTTP/1.1 200 ", 0), 0u);
  EXPECT_EQ(first.readAll(), "");  // the oldest half-sent request gave way
  second.send("\r\n");
  EXPECT_EQ(second.readAll().rfind("HTTP/1.1 200 ", 0), 0u);
}

// docs/operations.md "HTTP endpoints": idle connections cannot keep /healthz unanswered.
TEST_F(HttpServerTest, AnIdleConnectionFloodDoesNotKeepHealthUnanswered) {
  start();  // the defaults: 64 connections
  std::vector<std::unique_ptr<RawClient>> idle;
  for (int i = 0; i < 200; ++i) idle.push_back(std::make_unique<RawClient>(port()));
  for (int round = 0; round < 5; ++round) {
    EXPECT_EQ(exchange("GET /healthz HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 200 ", 0), 0u)
        << "round " << round;
  }
}

TEST_F(HttpServerTest, AConnectionMustSendItsHeadWithinTheHeadTimeout) {
  relay::testing::FakeClock clock;
  HttpServerSettings settings;
  settings.head_timeout = seconds(1);
  settings.request_timeout = seconds(30);
  settings.max_body_bytes = 16;
  start(settings, &clock);
  RawClient silent(port());
  RawClient slow_body(port());
  slow_body.send("POST /metrics HTTP/1.1\r\nContent-Length: 5\r\n\r\nab");
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  clock.advance(std::chrono::milliseconds(1500));
  EXPECT_EQ(silent.readAll(), "");  // no head within a second: closed
  // A head that arrived in time keeps the request's own deadline for its body (then 405).
  slow_body.send("cde");
  EXPECT_EQ(slow_body.readAll().rfind("HTTP/1.1 405 ", 0), 0u);
  server_->stop();  // before `clock` goes
}

TEST_F(HttpServerTest, HandlersSeeThePeerAddress) {
  std::string peer;
  startWith({}, [&peer](HttpServer& server) {
    server.handle("/who", [&peer](const HttpRequest& request) {
      peer = request.peer;
      return HttpReply{200, "ok"};
    });
  });
  EXPECT_EQ(exchange("GET /who HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 200 ", 0), 0u);
  EXPECT_EQ(peer, "127.0.0.1");
}

TEST_F(HttpServerTest, StopIsIdempotentAndEndsServing) {
  start();
  server_->stop();
  server_->stop();
  const http::Address address = server_->address();
  server_.reset();
  auto response = http::get(address, "/metrics", seconds(5), clock_);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error().kind, ErrorKind::kUnavailable);
}

TEST_F(HttpServerTest, BindingABusyPortFailsNamingTheAddress) {
  start();
  auto second = HttpServer::create({"127.0.0.1", port()}, {}, clock_);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().kind, ErrorKind::kUnavailable);
  EXPECT_NE(second.error().message.find("127.0.0.1:" + std::to_string(port())), std::string::npos);
  EXPECT_NE(second.error().message.find("in use"), std::string::npos) << second.error().message;
}

TEST_F(HttpServerTest, ANonLocalAddressFailsToBind) {
  auto created = HttpServer::create({"192.0.2.1", 0}, {}, clock_);  // TEST-NET-1
  ASSERT_FALSE(created.ok());
  EXPECT_NE(created.error().message.find("192.0.2.1:0"), std::string::npos);
}

TEST_F(HttpServerTest, ServesOnIpv6Loopback) {
  auto created = HttpServer::create({"::1", 0}, {}, clock_);
  if (!created.ok()) GTEST_SKIP() << "no IPv6 loopback here: " << created.error().message;
  (*created)->handle("/healthz", [](const HttpRequest&) { return HttpReply{200, "ok\n"}; });
  ASSERT_TRUE((*created)->start().ok());
  EXPECT_EQ((*created)->address().toString(),
            "[::1]:" + std::to_string((*created)->address().port));
  auto response = http::get((*created)->address(), "/healthz", seconds(10), clock_);
  ASSERT_TRUE(response.ok()) << response.error().message;
  EXPECT_EQ(response->body, "ok\n");
}

}  // namespace
}  // namespace relay::http
