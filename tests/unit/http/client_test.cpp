#include "http/client.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>

#include "common/poll.h"
#include "common/system_clock.h"

namespace relay::http {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

/// A scripted HTTP peer on loopback TCP or a unix socket: accepts one connection, reads the
/// request head (and a Content-Length body), keeps it for the test, writes `answer` and closes
/// unless told to hold the connection open. Every blocking call has a real-time bound so a
/// broken client fails the test instead of hanging it.
class ScriptedPeer {
 public:
  struct Script {
    std::string answer;
    bool accept = true;  // false: listen, never accept (the kernel's backlog takes the connect)
    bool hold = false;   // keep the connection open after the answer
  };

  enum class Transport { kTcp, kUnixSocket };

  ScriptedPeer(Transport transport, Script script) : script_(std::move(script)) {
    if (transport == Transport::kTcp) {
      listener_ = UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
      sockaddr_in address{};
      address.sin_family = AF_INET;
      address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      listen(reinterpret_cast<sockaddr*>(&address), sizeof address);
      socklen_t length = sizeof address;
      ::getsockname(listener_.get(), reinterpret_cast<sockaddr*>(&address), &length);
      endpoint_ = Address{"127.0.0.1", ntohs(address.sin_port)};
    } else {
      char directory[] = "/tmp/relay-http-XXXXXX";
      if (::mkdtemp(directory) == nullptr) throw std::runtime_error("mkdtemp failed");
      directory_ = directory;
      const std::string path = directory_ + "/peer.sock";
      listener_ = UniqueFd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
      sockaddr_un address{};
      address.sun_family = AF_UNIX;
      std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
      listen(reinterpret_cast<sockaddr*>(&address), sizeof address);
      endpoint_ = UnixSocket{path};
    }
    if (script_.accept) thread_ = std::thread([this] { serve(); });
  }

  ScriptedPeer(const ScriptedPeer&) = delete;
  ScriptedPeer& operator=(const ScriptedPeer&) = delete;
  ~ScriptedPeer() {
    if (thread_.joinable()) thread_.join();
    if (!directory_.empty()) std::filesystem::remove_all(directory_);
  }

  const Endpoint& endpoint() const { return endpoint_; }
  /// The request head and body as received; call after the client returned.
  std::string request() {
    if (thread_.joinable()) thread_.join();
    return request_;
  }
  /// The accepted connection, open when the script holds it.
  int connection() const { return connection_.get(); }

 private:
  void listen(sockaddr* address, socklen_t length) {
    if (!listener_.valid() || ::bind(listener_.get(), address, length) != 0 ||
        ::listen(listener_.get(), 4) != 0) {
      throw std::runtime_error(std::string("scripted peer: ") + std::strerror(errno));
    }
  }

  void serve() {
    connection_ = UniqueFd(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!connection_.valid()) return;
    timeval bound{5, 0};
    ::setsockopt(connection_.get(), SOL_SOCKET, SO_RCVTIMEO, &bound, sizeof bound);
    char buffer[4096];
    while (request_.find("\r\n\r\n") == std::string::npos || !bodyComplete()) {
      const ssize_t got = ::recv(connection_.get(), buffer, sizeof buffer, 0);
      if (got <= 0) break;
      request_.append(buffer, static_cast<std::size_t>(got));
    }
    ::send(connection_.get(), script_.answer.data(), script_.answer.size(), MSG_NOSIGNAL);
    if (!script_.hold) connection_.reset();
  }

  bool bodyComplete() const {
    const std::size_t head = request_.find("\r\n\r\n");
    const std::size_t field = request_.find("Content-Length: ");
    if (field == std::string::npos || field > head) return true;
    const std::size_t length = std::stoul(request_.substr(field + 16));
    return request_.size() >= head + 4 + length;
  }

  Script script_;
  UniqueFd listener_;
  UniqueFd connection_;
  Endpoint endpoint_;
  std::string directory_;
  std::string request_;
  std::thread thread_;
};

class ClientTest : public ::testing::Test {
 protected:
  MonoTime in(milliseconds duration) { return clock_.monotonicNow() + duration; }
  SystemClock clock_;
};

TEST_F(ClientTest, GetOverTcpSendsOneClosingRequestAndReadsAContentLengthBody) {
  ScriptedPeer peer(ScriptedPeer::Transport::kTcp,
                    {"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n"});
  const Client client(peer.endpoint(), clock_);
  auto response = client.send({"GET", "/healthz", {}}, in(seconds(5)));
  ASSERT_TRUE(response.ok()) << response.error().message;
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "ok\n");
  const std::string request = peer.request();
  const std::string host = std::get<Address>(peer.endpoint()).toString();
  EXPECT_EQ(request.rfind("GET /healthz HTTP/1.1\r\nHost: " + host + "\r\n", 0), 0u) << request;
  EXPECT_NE(request.find("Connection: close\r\n"), std::string::npos) << request;
}

TEST_F(ClientTest, PostOverAUnixSocketSendsTheJsonBodyAndDecodesAChunkedAnswer) {
  ScriptedPeer peer(ScriptedPeer::Transport::kUnixSocket,
                    {"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n"
                     "3\r\n{\"I\r\n6\r\nd\":42}\r\n0\r\n\r\n"});
  const Client client(peer.endpoint(), clock_, "docker daemon at unix:///test");
  auto response = client.send({"POST", "/containers/create", R"({"Image":"x"})"}, in(seconds(5)));
  ASSERT_TRUE(response.ok()) << response.error().message;
  EXPECT_EQ(response->status, 201);
  EXPECT_EQ(response->body, R"({"Id":42})");
  const std::string request = peer.request();
  EXPECT_NE(request.find("Content-Type: application/json\r\n"), std::string::npos) << request;
  EXPECT_NE(request.find("Content-Length: 13\r\n\r\n{\"Image\":\"x\"}"), std::string::npos)
      << request;
}

TEST_F(ClientTest, ABodyEndedByTheCloseIsReadToTheEnd) {
  ScriptedPeer peer(ScriptedPeer::Transport::kTcp, {"HTTP/1.1 200 OK\r\n\r\nall of it"});
  auto response = Client(peer.endpoint(), clock_).send({"GET", "/", {}}, in(seconds(5)));
  ASSERT_TRUE(response.ok()) << response.error().message;
  EXPECT_EQ(response->body, "all of it");
}

TEST_F(ClientTest, UpgradeHandsOverTheConnectionWithTheBytesThatCameWithTheHeaders) {
  ScriptedPeer peer(
      ScriptedPeer::Transport::kUnixSocket,
      {"HTTP/1.1 101 UPGRADED\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\nearly", true, true});
  const Client client(peer.endpoint(), clock_);
  auto upgraded = client.upgrade({"POST", "/containers/x/attach", {}}, in(seconds(5)));
  ASSERT_TRUE(upgraded.ok()) << upgraded.error().message;
  EXPECT_EQ(upgraded->first.status, 101);
  EXPECT_EQ(upgraded->second.buffered, "early");
  const std::string request = peer.request();
  EXPECT_NE(request.find("Connection: Upgrade\r\nUpgrade: tcp\r\n"), std::string::npos) << request;
  // The raw stream goes on both ways over the handed-over descriptor.
  ASSERT_EQ(::send(peer.connection(), "later", 5, MSG_NOSIGNAL), 5);
  auto readable = pollUntil(clock_, upgraded->second.fd.get(), POLLIN, in(seconds(5)));
  ASSERT_TRUE(readable.ok());
  char buffer[16] = {};
  EXPECT_EQ(::recv(upgraded->second.fd.get(), buffer, sizeof buffer, 0), 5);
  EXPECT_STREQ(buffer, "later");
}

TEST_F(ClientTest, NothingListeningIsUnavailableAndTheMessageNamesThePeer) {
  Address closed;
  {
    ScriptedPeer peer(ScriptedPeer::Transport::kTcp, {"", false});
    closed = std::get<Address>(peer.endpoint());
  }
  auto tcp = Client(closed, clock_).send({"GET", "/", {}}, in(seconds(5)));
  ASSERT_FALSE(tcp.ok());
  EXPECT_EQ(tcp.error().kind, ErrorKind::kUnavailable);
  EXPECT_EQ(tcp.error().message, "cannot connect to " + closed.toString() + ": Connection refused");

  const Client missing(UnixSocket{"/nonexistent/relay.sock"}, clock_, "docker daemon at here");
  auto unix_socket = missing.send({"GET", "/_ping", {}}, in(seconds(5)));
  ASSERT_FALSE(unix_socket.ok());
  EXPECT_EQ(unix_socket.error().kind, ErrorKind::kUnavailable);
  EXPECT_EQ(unix_socket.error().message,
            "cannot connect to docker daemon at here: No such file or directory");
}

TEST_F(ClientTest, APeerThatNeverAnswersTimesOutOnEitherTransport) {
  for (const auto transport :
       {ScriptedPeer::Transport::kTcp, ScriptedPeer::Transport::kUnixSocket}) {
    ScriptedPeer peer(transport, {"", false});
    const Client client(peer.endpoint(), clock_, "the silent peer");
    auto response = client.send({"GET", "/", {}}, in(milliseconds(200)));
    ASSERT_FALSE(response.ok());
    EXPECT_EQ(response.error().kind, ErrorKind::kTimeout);
    EXPECT_EQ(response.error().message, "the silent peer did not answer in time");
  }
}

TEST_F(ClientTest, AnAnswerThatIsNotHttpIsAnInternalErrorNamingThePeer) {
  ScriptedPeer peer(ScriptedPeer::Transport::kTcp, {"SSH-2.0-OpenSSH\r\n\r\n"});
  auto response = Client(peer.endpoint(), clock_, "worker").send({"GET", "/", {}}, in(seconds(5)));
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error().kind, ErrorKind::kInternal);
  EXPECT_EQ(response.error().message.rfind("worker: malformed HTTP response: bad status line", 0),
            0u)
      << response.error().message;
}

TEST_F(ClientTest, AConnectionClosedMidBodyIsAnErrorNotAShortBody) {
  ScriptedPeer peer(ScriptedPeer::Transport::kTcp,
                    {"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort"});
  auto response = Client(peer.endpoint(), clock_).send({"GET", "/", {}}, in(seconds(5)));
  ASSERT_FALSE(response.ok());
  EXPECT_NE(response.error().message.find("before the end of the response body"), std::string::npos)
      << response.error().message;
}

TEST_F(ClientTest, ASocketPathLongerThanTheKernelTakesIsInvalid) {
  const Client client(UnixSocket{"/" + std::string(200, 'x')}, clock_);
  auto response = client.send({"GET", "/", {}}, in(seconds(1)));
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.error().kind, ErrorKind::kInvalidArgument);
  EXPECT_NE(response.error().message.find("is longer than 107 bytes"), std::string::npos);
}

}  // namespace
}  // namespace relay::http
