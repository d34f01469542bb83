// What a `network: true` handler can reach (docs/runtimes.md "network: true"), under the real
// `relay start`, cold and prewarmed. Every peer is an address of this machine: a network
// namespace the test makes (EgressNamespace, with a link-local address too) and listeners the
// test opens on the host's own addresses; nothing outside the machine is contacted, never
// 169.254.169.254.
#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "integration/hostile/hostile_fixture.h"
#include "support/egress_namespace.h"

namespace relay::testing {
namespace {

/// A TCP listener of the test on one address of the host, answering "host-ok\n"; stands for
/// the host's services listening on a wildcard address.
class HostListener {
 public:
  /// `address` is IPv4 or IPv6 (`fe80::1%eth0` with its interface); port 0 picks one.
  static std::unique_ptr<HostListener> open(const std::string& address) {
    auto listener = std::unique_ptr<HostListener>(new HostListener());
    const std::size_t percent = address.find('%');
    const std::string host = address.substr(0, percent);
    sockaddr_storage storage{};
    socklen_t length = 0;
    if (host.find(':') != std::string::npos) {
      auto* in6 = reinterpret_cast<sockaddr_in6*>(&storage);
      in6->sin6_family = AF_INET6;
      if (::inet_pton(AF_INET6, host.c_str(), &in6->sin6_addr) != 1) return nullptr;
      if (percent != std::string::npos) {
        in6->sin6_scope_id = ::if_nametoindex(address.substr(percent + 1).c_str());
      }
      length = sizeof *in6;
    } else {
      auto* in = reinterpret_cast<sockaddr_in*>(&storage);
      in->sin_family = AF_INET;
      if (::inet_pton(AF_INET, host.c_str(), &in->sin_addr) != 1) return nullptr;
      length = sizeof *in;
    }
    listener->fd_.reset(::socket(storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!listener->fd_.valid() ||
        ::bind(listener->fd_.get(), reinterpret_cast<sockaddr*>(&storage), length) != 0 ||
        ::listen(listener->fd_.get(), 16) != 0 ||
        ::getsockname(listener->fd_.get(), reinterpret_cast<sockaddr*>(&storage), &length) != 0) {
      ADD_FAILURE() << "cannot listen on " << address << ": " << std::strerror(errno);
      return nullptr;
    }
    listener->port_ =
        ntohs(storage.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&storage)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&storage)->sin_port);
    int stop[2];
    if (::pipe2(stop, O_CLOEXEC) != 0) return nullptr;
    listener->stop_read_.reset(stop[0]);
    listener->stop_write_.reset(stop[1]);
    listener->thread_ = std::thread([raw = listener.get()] { raw->serve(); });
    return listener;
  }
  ~HostListener() {
    if (thread_.joinable()) {
      (void)!::write(stop_write_.get(), "x", 1);
      thread_.join();
    }
  }
  int port() const { return port_; }
  int accepted() const { return accepted_.load(); }

 private:
  HostListener() = default;
  void serve() {
    while (true) {
      pollfd fds[2] = {{fd_.get(), POLLIN, 0}, {stop_read_.get(), POLLIN, 0}};
      if (::poll(fds, 2, -1) < 0 && errno != EINTR) return;
      if (fds[1].revents != 0) return;
      const UniqueFd client(::accept4(fd_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!client.valid()) continue;
      ++accepted_;
      (void)!::send(client.get(), "host-ok\n", 8, MSG_NOSIGNAL);
    }
  }
  UniqueFd fd_, stop_read_, stop_write_;
  int port_ = 0;
  std::atomic<int> accepted_{0};
  std::thread thread_;
};

// The interface of the host's first default route (the one pasta gives the namespace a copy
// of) and its IPv6 link-local address as `fe80::...%<interface>`; empty when there is none.
std::string defaultRouteLinkLocal() {
  std::ifstream routes("/proc/net/route");
  std::string line, interface;
  std::getline(routes, line);
  while (std::getline(routes, line)) {
    std::istringstream fields(line);
    std::string name, destination;
    fields >> name >> destination;
    if (destination == "00000000") {
      interface = name;
      break;
    }
  }
  if (interface.empty()) return {};
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return {};
  std::string found;
  for (const ifaddrs* entry = list; entry != nullptr; entry = entry->ifa_next) {
    if (entry->ifa_addr == nullptr || entry->ifa_addr->sa_family != AF_INET6 ||
        interface != entry->ifa_name) {
      continue;
    }
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(entry->ifa_addr);
    if (!IN6_IS_ADDR_LINKLOCAL(&in6->sin6_addr)) continue;
    char text[INET6_ADDRSTRLEN];
    ::inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text);
    found = std::string(text) + "%" + interface;
    break;
  }
  ::freeifaddrs(list);
  return found;
}

std::string target(const std::string& host, int port, bool forbidden) {
  return R"({"host":")" + host + R"(","port":)" + std::to_string(port) + R"(,"forbidden":)" +
         (forbidden ? "true" : "false") + "}";
}

std::size_t countPrefixed(const std::vector<std::string>& lines, const std::string& prefix) {
  std::size_t found = 0;
  for (const std::string& line : lines) found += line.rfind(prefix, 0) == 0;
  return found;
}

TEST_F(HostileHandler, WithNetworkCannotReachLinkLocalOrTheHostsOwnAddresses) {
  auto peer = EgressNamespace::create();
  ASSERT_TRUE(peer.ok()) << peer.error().message;
  auto on_host = HostListener::open((*peer)->hostAddress());
  ASSERT_NE(on_host, nullptr);
  const std::string link_local = defaultRouteLinkLocal();
  std::unique_ptr<HostListener> on_link_local =
      link_local.empty() ? nullptr : HostListener::open(link_local);
  addApp("hostile-net", {"egress"}, "network: true\n");
  startRelay();
  std::string targets = target((*peer)->linkLocalAddress(), (*peer)->port(), true) + "," +
                        target((*peer)->hostAddress(), on_host->port(), true) + "," +
                        target((*peer)->address(), (*peer)->port(), false);
  std::size_t forbidden = 2;
  if (on_link_local) {
    targets += "," + target(link_local, on_link_local->port(), true);
    ++forbidden;
  }
  const auto lines =
      attempt("hostile-net", "egress", R"({"attempt":"egress","targets":[)" + targets + "]}");
  expectAllBlocked(lines, forbidden);
  // Outbound still works: the namespace's ordinary address answered every run.
  EXPECT_EQ(countPrefixed(lines, "UNREACHED "), 0u) << joined(lines);
  EXPECT_GE(countPrefixed(lines, "REACHED "), 1u) << joined(lines);
  EXPECT_EQ(on_host->accepted(), 0);
  if (on_link_local) {
    EXPECT_EQ(on_link_local->accepted(), 0);
  }
}

TEST_F(HostileHandler, WithAnEgressListReachesOnlyWhatItNames) {
  auto peer = EgressNamespace::create();
  ASSERT_TRUE(peer.ok()) << peer.error().message;
  auto on_host = HostListener::open((*peer)->hostAddress());
  ASSERT_NE(on_host, nullptr);
  const int port = (*peer)->port();
  // Listed: the peer on its port, and the host's own address, which stays denied anyway.
  addApp("listed", {"egress"},
         "network: true\negress:\n  - to: " + (*peer)->address() + "/32\n    ports: [" +
             std::to_string(port) + "]\n  - to: " + (*peer)->hostAddress() + "\n");
  // Listed on another port only: the peer's listener is out of reach.
  addApp("other-port", {"egress"},
         "network: true\negress:\n  - to: " + (*peer)->address() + "\n    ports: [\"" +
             std::to_string(port + 1) + "-" + std::to_string(port + 2) + "\"]\n");
  startRelay();
  const auto listed =
      attempt("listed", "egress",
              R"({"attempt":"egress","targets":[)" + target((*peer)->address(), port, false) + "," +
                  target((*peer)->hostAddress(), on_host->port(), true) + "," +
                  target((*peer)->linkLocalAddress(), port, true) + "]}");
  expectAllBlocked(listed, 2);
  EXPECT_EQ(countPrefixed(listed, "UNREACHED "), 0u) << joined(listed);
  EXPECT_GE(countPrefixed(listed, "REACHED "), 1u) << joined(listed);
  const auto other =
      attempt("other-port", "egress",
              R"({"attempt":"egress","targets":[)" + target((*peer)->address(), port, true) + "]}");
  expectAllBlocked(other, 1);
  EXPECT_EQ(on_host->accepted(), 0);
}

// docs/operations.md "HTTP endpoints": a client holding idle connections open cannot keep the
// worker's /healthz unanswered.
TEST_F(HostileHandler, IdleConnectionsCannotKeepHealthzUnanswered) {
  startRelay();
  const std::string text = log();
  const std::size_t at = text.find(" http=127.0.0.1:");
  ASSERT_NE(at, std::string::npos) << text;
  const int port = std::stoi(text.substr(at + 16));
  const auto connectTo = [port]() {
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const timeval timeout{5, 0};
    ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    EXPECT_EQ(::connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    return fd;
  };
  const auto healthz = [&connectTo]() {
    const UniqueFd probe = connectTo();
    const std::string request = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    EXPECT_EQ(::send(probe.get(), request.data(), request.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(request.size()));
    std::string answer;
    char buffer[1024];
    for (ssize_t n; (n = ::recv(probe.get(), buffer, sizeof buffer, 0)) > 0;) {
      answer.append(buffer, static_cast<std::size_t>(n));
    }
    return answer;
  };
  // Healthy first: a worker just started says "not connected yet" until its reader connected.
  ASSERT_TRUE(SpawnedProcess::waitUntil([&] { return healthz().rfind("HTTP/1.1 200 ", 0) == 0; },
                                        std::chrono::seconds(30)))
      << healthz();
  std::vector<UniqueFd> idle;
  for (int i = 0; i < 256; ++i) idle.push_back(connectTo());
  for (int round = 0; round < 3; ++round) {
    const std::string answer = healthz();
    EXPECT_EQ(answer.rfind("HTTP/1.1 200 ", 0), 0u) << "round " << round << ": " << answer;
    idle.push_back(connectTo());  // the flood goes on
  }
}

}  // namespace
}  // namespace relay::testing
