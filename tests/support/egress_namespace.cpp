#include "support/egress_namespace.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace relay::testing {
namespace {

Status run(const std::string& command) {
  const int status = std::system((command + " >/dev/null 2>&1").c_str());
  if (status != 0) return Error::unavailable("`" + command + "` failed (needs root and iproute2)");
  return {};
}

std::string errnoText(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

// A socket bound and listening inside the namespace at `path` (setns on this thread only, then
// back: the socket stays in the namespace it was created in).
Result<UniqueFd> listenIn(const std::string& path, int& port) {
  const UniqueFd own(::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
  const UniqueFd target(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!own.valid() || !target.valid()) return Error::io(errnoText("open netns"));
  if (::setns(target.get(), CLONE_NEWNET) != 0) return Error::io(errnoText("setns"));
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const int saved = errno;
  if (::setns(own.get(), CLONE_NEWNET) != 0) std::abort();  // the test process must not stay
  errno = saved;
  if (!fd.valid()) return Error::io(errnoText("socket"));
  sockaddr_in bound{};
  bound.sin_family = AF_INET;
  bound.sin_addr.s_addr = htonl(INADDR_ANY);  // only the namespace's own addresses exist there
  socklen_t length = sizeof bound;
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&bound), sizeof bound) != 0 ||
      ::listen(fd.get(), 16) != 0 ||
      ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &length) != 0) {
    return Error::io(errnoText("bind/listen in the egress namespace"));
  }
  port = ntohs(bound.sin_port);
  return fd;
}

}  // namespace

Result<std::unique_ptr<EgressNamespace>> EgressNamespace::create() {
  std::unique_ptr<EgressNamespace> egress(new EgressNamespace());
  const int pid = static_cast<int>(::getpid());
  const int block = pid % 16384;  // a /30 of 10.213.0.0/16
  const std::string base = "10.213." + std::to_string(block / 64) + ".";
  const int last = (block % 64) * 4;
  egress->host_address_ = base + std::to_string(last + 1);
  egress->address_ = base + std::to_string(last + 2);
  // 169.254.169.x is skipped: a cloud's metadata service answers at 169.254.169.254.
  const int third = block / 64 == 169 ? 170 : block / 64;
  const std::string link_local = "169.254." + std::to_string(third) + ".";
  egress->link_local_address_ = link_local + std::to_string(last + 2);
  egress->name_ = "relay-egress-" + std::to_string(pid);
  egress->host_link_ = "rlyh" + std::to_string(pid);
  const std::string inner_link = "rlyn" + std::to_string(pid);
  const std::string in_ns = "ip netns exec " + egress->name_ + " ";
  for (const std::string& command :
       {"ip netns add " + egress->name_,
        "ip link add " + egress->host_link_ + " type veth peer name " + inner_link,
        "ip link set " + inner_link + " netns " + egress->name_,
        "ip addr add " + egress->host_address_ + "/30 dev " + egress->host_link_,
        "ip addr add " + link_local + std::to_string(last + 1) + "/30 dev " + egress->host_link_,
        "ip link set " + egress->host_link_ + " up",
        in_ns + "ip addr add " + egress->address_ + "/30 dev " + inner_link,
        in_ns + "ip addr add " + egress->link_local_address_ + "/30 dev " + inner_link,
        in_ns + "ip link set " + inner_link + " up", in_ns + "ip link set lo up"}) {
    if (auto status = run(command); !status.ok()) return status.error();
  }
  auto listener = listenIn("/run/netns/" + egress->name_, egress->port_);
  if (!listener.ok()) return listener.error();
  egress->listener_ = std::move(*listener);
  int stop[2];
  if (::pipe2(stop, O_CLOEXEC) != 0) return Error::io(errnoText("pipe2"));
  egress->stop_read_.reset(stop[0]);
  egress->stop_write_.reset(stop[1]);
  egress->thread_ = std::thread([raw = egress.get()] { raw->serve(); });
  return egress;
}

EgressNamespace::~EgressNamespace() {
  if (thread_.joinable()) {
    (void)!::write(stop_write_.get(), "x", 1);
    thread_.join();
  }
  (void)run("ip netns del " + name_);
  (void)run("ip link del " + host_link_);  // gone with the namespace already, normally
}

void EgressNamespace::serve() {
  while (true) {
    pollfd fds[2] = {{listener_.get(), POLLIN, 0}, {stop_read_.get(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0 && errno != EINTR) return;
    if (fds[1].revents != 0) return;
    if ((fds[0].revents & POLLIN) == 0) continue;
    const UniqueFd client(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!client.valid()) continue;
    ++accepted_;
    static constexpr char kAnswer[] = "egress-ok\n";
    (void)!::send(client.get(), kAnswer, sizeof kAnswer - 1, MSG_NOSIGNAL);
  }
}

}  // namespace relay::testing
