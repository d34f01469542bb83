// installEgressFilter() in a network namespace the test makes (a child process unshares one;
// needs root and iproute2): UDP sends tell allowed from rejected at once (a rejected datagram
// fails the send with EPERM; an allowed one is queued even though no neighbour answers), so
// no peer is needed and nothing leaves the namespace.
#include "runtime/sandbox/egress_filter.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <functional>
#include <string>

#include <gtest/gtest.h>

namespace relay::runtime {
namespace {

// Runs `body` in a forked child inside a fresh network namespace with lo up and a veth pair
// whose routes lead 192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24 (IPv4) and 2001:db8::/32
// (IPv6) out of it; the child's exit code (0 for success), or a failure code of the set-up.
int inNamespace(const std::function<int()>& body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::unshare(CLONE_NEWNET) != 0) ::_exit(90);
    for (const char* command :
         {"ip link set lo up", "ip link add rly0 type veth peer name rly1", "ip link set rly0 up",
          "ip link set rly1 up", "ip addr add 192.0.2.1/24 dev rly0",
          "ip route add 198.51.100.0/24 via 192.0.2.2", "ip route add 203.0.113.0/24 via 192.0.2.2",
          "ip -6 addr add 2001:db8::1/64 dev rly0 nodad",
          "ip -6 route add 2001:db8:1::/48 via 2001:db8::2",
          "ip -6 route add 2001:db8:2::/48 via 2001:db8::2"}) {
      if (std::system((std::string(command) + " >/dev/null 2>&1").c_str()) != 0) ::_exit(91);
    }
    ::_exit(body());
  }
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 200 + WTERMSIG(status);
}

// host:port as a socket address (IPv6 when host has a colon); its length.
socklen_t addressOf(const char* host, int port, sockaddr_storage& storage) {
  storage = {};
  if (std::string(host).find(':') != std::string::npos) {
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&storage);
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(static_cast<std::uint16_t>(port));
    ::inet_pton(AF_INET6, host, &in6->sin6_addr);
    return sizeof *in6;
  }
  auto* in = reinterpret_cast<sockaddr_in*>(&storage);
  in->sin_family = AF_INET;
  in->sin_port = htons(static_cast<std::uint16_t>(port));
  ::inet_pton(AF_INET, host, &in->sin_addr);
  return sizeof *in;
}

// 0 when a datagram to host:port was sent, else the send's errno.
int sendTo(const char* host, int port) {
  sockaddr_storage storage;
  const socklen_t length = addressOf(host, port, storage);
  const int fd = ::socket(storage.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  const int sent = static_cast<int>(
      ::sendto(fd, "x", 1, 0, reinterpret_cast<const sockaddr*>(&storage), length));
  const int error = sent == 1 ? 0 : errno;
  ::close(fd);
  return error;
}

// The errno of a TCP connect to host:port (2 s at most), 0 when it connected.
int connectTo(const char* host, int port) {
  sockaddr_storage storage;
  const socklen_t length = addressOf(host, port, storage);
  const int fd = ::socket(storage.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  const timeval limit{2, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
  const int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&storage), length);
  const int error = rc == 0 ? 0 : errno;
  ::close(fd);
  return error;
}

EgressPolicy policyOf(const std::string& text) {
  auto policy = decodeEgressPolicy(text);
  EXPECT_TRUE(policy.ok()) << text;
  return policy.ok() ? *policy : EgressPolicy{};
}

TEST(EgressFilter, DeniedBlocksFailAtOnceTheRestPasses) {
  const EgressPolicy policy =
      policyOf("deny 203.0.113.0/24;deny 2001:db8:1::/48;deny 169.254.0.0/16;deny 127.0.0.0/8");
  EXPECT_EQ(inNamespace([&] {
              if (!installEgressFilter(policy).ok()) return 10;
              if (sendTo("203.0.113.5", 53) != EPERM) return 11;
              if (sendTo("203.0.113.255", 9) != EPERM) return 12;
              if (sendTo("198.51.100.5", 53) != 0) return 13;
              if (sendTo("2001:db8:1::5", 53) != EPERM) return 14;
              if (sendTo("2001:db8:2::5", 53) != 0) return 15;
              // An IPv4-mapped IPv6 address leaves as IPv4: the IPv4 rule applies.
              if (sendTo("::ffff:203.0.113.5", 53) != EPERM) return 16;
              // The namespace's own loopback passes whatever the list says.
              if (sendTo("127.0.0.1", 9) != 0) return 17;
              // A refused TCP connect fails at once (a reset), IPv6 too.
              if (connectTo("203.0.113.5", 80) != ECONNREFUSED) return 18;
              if (connectTo("2001:db8:1::5", 80) != ECONNREFUSED) return 19;
              return 0;
            }),
            0);
}

TEST(EgressFilter, AnAllowListLetsOnlyItsDestinationsAndPortsPass) {
  const EgressPolicy policy = policyOf(
      "deny 198.51.100.66/32;allow 198.51.100.0/24 53-53,8000-8080;allow "
      "2001:db8:2::/48;only");
  EXPECT_EQ(inNamespace([&] {
              if (!installEgressFilter(policy).ok()) return 10;
              if (sendTo("198.51.100.5", 53) != 0) return 11;
              if (sendTo("198.51.100.5", 8080) != 0) return 12;
              if (sendTo("198.51.100.5", 54) != EPERM) return 13;
              if (sendTo("198.51.100.5", 8081) != EPERM) return 14;
              if (sendTo("203.0.113.5", 53) != EPERM) return 15;
              // Denied wins over allowed.
              if (sendTo("198.51.100.66", 53) != EPERM) return 16;
              if (sendTo("2001:db8:2::5", 4444) != 0) return 17;
              if (sendTo("2001:db8:1::5", 53) != EPERM) return 18;
              if (sendTo("127.0.0.1", 9) != 0) return 19;
              return 0;
            }),
            0);
}

TEST(EgressFilter, WithoutTheFilterEverythingPasses) {
  // The contrast that makes the two tests above mean something.
  EXPECT_EQ(inNamespace([] {
              if (sendTo("203.0.113.5", 53) != 0) return 11;
              if (sendTo("198.51.100.5", 54) != 0) return 12;
              if (sendTo("2001:db8:1::5", 53) != 0) return 13;
              return 0;
            }),
            0);
}

}  // namespace
}  // namespace relay::runtime
