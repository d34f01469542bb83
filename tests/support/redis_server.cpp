#include "support/redis_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>

namespace relay::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

constexpr int kPortAttempts = 8;
constexpr milliseconds kPollInterval(10);
constexpr milliseconds kStopGrace(10'000);

std::string errnoText(std::string_view what) {
  return std::string(what) + ": " + std::strerror(errno);
}

Result<std::string> findOnPath(std::string_view name) {
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "";
  while (!dirs.empty()) {
    const size_t colon = dirs.find(':');
    const std::string_view dir = dirs.substr(0, colon);
    dirs = colon == std::string_view::npos ? std::string_view() : dirs.substr(colon + 1);
    if (dir.empty()) continue;
    std::string candidate = std::string(dir) + "/" + std::string(name);
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return Error::notFound(std::string(name) + " not found on PATH (" +
                         (path != nullptr ? path : "unset") +
                         "); install Debian's redis-server package (scripts/test does)");
}

// A port the kernel just handed out for 127.0.0.1. Another process may take it before
// redis-server binds it; create() retries when that happens.
Result<int> pickFreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Error::io(errnoText("socket"));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  Result<int> port = Error::io("unreachable");
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    port = Error::io(errnoText("bind 127.0.0.1:0"));
  } else if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    port = Error::io(errnoText("getsockname"));
  } else {
    port = static_cast<int>(ntohs(address.sin_port));
  }
  ::close(fd);
  return port;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Blocks until `pid` is reaped, retrying on EINTR; returns the wait status.
int reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

std::string describeExit(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "was killed by signal " + std::to_string(WTERMSIG(status));
  return "stopped";
}

}  // namespace

RedisServer::RedisServer(std::string binary, std::string dir, RedisServerOptions options)
    : binary_(std::move(binary)),
      dir_(std::move(dir)),
      socket_path_(dir_ + "/redis.sock"),
      log_path_(dir_ + "/redis.log"),
      options_(std::move(options)) {}

RedisServer::~RedisServer() {
  kill9();
  std::error_code ignored;  // best effort: a leftover temp dir must not fail the test
  fs::remove_all(dir_, ignored);
}

Result<std::unique_ptr<RedisServer>> RedisServer::create(RedisServerOptions options) {
  auto binary = findOnPath("redis-server");
  if (!binary) return binary.error();

  std::error_code ec;
  fs::path base = fs::temp_directory_path(ec);
  if (ec) base = "/tmp";
  std::string pattern = (base / "relay-redis-XXXXXX").string();
  // The socket path must fit sockaddr_un::sun_path; fall back to /tmp for a deep TMPDIR.
  if (pattern.size() + std::strlen("/redis.sock") >= sizeof(sockaddr_un{}.sun_path)) {
    pattern = "/tmp/relay-redis-XXXXXX";
  }
  if (::mkdtemp(pattern.data()) == nullptr) return Error::io(errnoText("mkdtemp " + pattern));

  std::unique_ptr<RedisServer> server(
      new RedisServer(std::move(*binary), pattern, std::move(options)));
  std::string failures;
  for (int attempt = 0; attempt < kPortAttempts; ++attempt) {
    auto port = pickFreePort();
    if (!port) return port.error();
    server->port_ = *port;
    if (server->options_.cluster_node_timeout.count() > 0) {
      auto bus = pickFreePort();
      if (!bus) return bus.error();
      server->bus_port_ = *bus;
    }
    auto started = server->launch();
    if (started) return server;
    // Only a lost race for the port is worth another try; anything else is reported as is.
    if (started.error().message.find("Address already in use") == std::string::npos) {
      return started.error();
    }
    failures += "\nport " + std::to_string(*port) + " was taken";
  }
  return Error::unavailable("redis-server could not bind a free port after " +
                            std::to_string(kPortAttempts) + " attempts:" + failures);
}

Status RedisServer::start() {
  if (running()) {
    return Error::invalid("redis-server is already running as pid " + std::to_string(pid_));
  }
  return launch();
}

std::vector<std::string> RedisServer::arguments() const {
  std::vector<std::pair<std::string, std::string>> settings = {
      {"--port", std::to_string(port_)},
      {"--bind", "127.0.0.1"},
      {"--unixsocket", socket_path_},
      {"--unixsocketperm", "700"},
      {"--dir", dir_},
      {"--save", ""},  // no RDB snapshots
      {"--appendonly", "no"},
      {"--daemonize", "no"},                // we own and reap the process
      {"--enable-debug-command", "local"},  // DEBUG SLEEP etc. for timeout tests
      {"--loglevel", "notice"},
  };
  std::vector<std::string> args = {binary_};
  if (options_.sentinel) {
    // Sentinel rewrites its configuration file: it lives in the temp dir, written once.
    const std::string config = dir_ + "/sentinel.conf";
    if (!std::filesystem::exists(config)) {
      const auto& sentinel = *options_.sentinel;
      std::ofstream out(config);
      out << "sentinel monitor " << sentinel.master_name << " 127.0.0.1 " << sentinel.master_port
          << " 2\n"
          << "sentinel down-after-milliseconds " << sentinel.master_name << " "
          << sentinel.down_after.count() << "\n"
          << "sentinel failover-timeout " << sentinel.master_name << " "
          << sentinel.failover_timeout.count() << "\n";
    }
    args.push_back(config);
    args.push_back("--sentinel");
    settings.erase(settings.begin() + 5, settings.begin() + 7);  // --save and --appendonly
  }
  if (options_.tls) {
    settings[0].second = "0";  // plain-text TCP off: TLS only
    settings.insert(settings.end(),
                    {{"--tls-port", std::to_string(port_)},
                     {"--tls-cert-file", options_.tls->cert_file},
                     {"--tls-key-file", options_.tls->key_file},
                     {"--tls-ca-cert-file", options_.tls->ca_file},
                     {"--tls-auth-clients", options_.tls->auth_clients ? "yes" : "no"}});
  }
  if (options_.cluster_node_timeout.count() > 0) {
    settings.insert(settings.end(), {{"--cluster-enabled", "yes"},
                                     {"--cluster-port", std::to_string(bus_port_)},
                                     {"--cluster-config-file", dir_ + "/nodes.conf"},
                                     {"--cluster-node-timeout",
                                      std::to_string(options_.cluster_node_timeout.count())}});
  }
  for (const auto& [name, value] : settings) {
    args.push_back(name);
    args.push_back(value);
  }
  args.insert(args.end(), options_.extra_args.begin(), options_.extra_args.end());
  return args;
}

Status RedisServer::launch() {
  std::vector<std::string> args = arguments();
  // Everything the child needs is prepared here: after fork() only async-signal-safe calls.
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  const int log_fd = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (log_fd < 0) return Error::io(errnoText("open " + log_path_));
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd < 0) {
    ::close(log_fd);
    return Error::io(errnoText("open /dev/null"));
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Die with the test process (the forking thread, strictly) so a crashed test leaks no
    // server; check the parent did not already go before the request took effect.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::dup2(null_fd, STDIN_FILENO);
    ::dup2(log_fd, STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    ::close_range(3, ~0U, 0);  // e.g. other tests' client sockets; failure is harmless
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  const int fork_errno = errno;
  ::close(log_fd);
  ::close(null_fd);
  if (pid < 0) {
    errno = fork_errno;
    return Error::io(errnoText("fork"));
  }
  pid_ = pid;
  return waitUntilReady();
}

Status RedisServer::waitUntilReady() {
  // Probe the unix socket: it lives in our private dir, so an answer there comes from our
  // child and not from another process that might hold the TCP port. Redis binds TCP first
  // and exits if that fails, so a live socket implies our server owns the port.
  const auto deadline = steady_clock::now() + options_.ready_timeout;
  redis::ConnectionSettings probe;
  probe.connect_timeout = milliseconds(200);
  probe.command_timeout = milliseconds(1000);
  std::string last_error = "no attempt";
  while (steady_clock::now() < deadline) {
    int status = 0;
    const pid_t done = ::waitpid(pid_, &status, WNOHANG);
    if (done == pid_) {
      pid_ = -1;
      return Error::unavailable("redis-server on port " + std::to_string(port_) + " " +
                                describeExit(status) + " before answering PING; its log:\n" +
                                log());
    }
    auto connection = redis::Connection::create(unixEndpoint(), probe);
    // NOAUTH at login proves the server is serving too (started with --requirepass).
    if (!connection && redis::isReplyError(connection.error(), "NOAUTH")) return {};
    if (connection) {
      auto pong = (*connection)->command({"PING"});
      // NOAUTH also proves the server is serving (started with --requirepass).
      if (pong || pong.error().kind == redis::ErrorKind::kReply) return {};
      last_error = pong.error().message;
    } else {
      last_error = connection.error().message;
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  kill9();
  return Error{ErrorKind::kTimeout, "redis-server on port " + std::to_string(port_) +
                                        " did not answer PING within the ready timeout (last "
                                        "error: " +
                                        last_error + "); its log:\n" + log()};
}

Status RedisServer::stop() {
  if (!running()) return {};
  if (::kill(pid_, SIGTERM) != 0) return Error::io(errnoText("kill SIGTERM"));
  const auto deadline = steady_clock::now() + kStopGrace;
  while (steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return {};
    }
    std::this_thread::sleep_for(kPollInterval);
  }
  kill9();
  return Error{ErrorKind::kTimeout, "redis-server ignored SIGTERM for 10s and was SIGKILLed"};
}

void RedisServer::kill9() {
  if (!running()) return;
  ::kill(pid_, SIGKILL);
  reap(pid_);
  pid_ = -1;
}

std::string RedisServer::uri() const { return "127.0.0.1:" + std::to_string(port_); }

redis::Endpoint RedisServer::endpoint() const {
  redis::Endpoint endpoint;
  endpoint.host = "127.0.0.1";
  endpoint.port = port_;
  if (options_.tls) {
    endpoint.tls = true;
    endpoint.tls_settings.ca_file = options_.tls->ca_file;
  }
  return endpoint;
}

redis::Endpoint RedisServer::unixEndpoint() const {
  redis::Endpoint endpoint;
  endpoint.transport = redis::Endpoint::Transport::kUnix;
  endpoint.host.clear();
  endpoint.port = 0;
  endpoint.unix_path = socket_path_;
  return endpoint;
}

std::string RedisServer::log() const { return readFile(log_path_); }

std::unique_ptr<redis::Connection> RedisServer::connect(redis::ConnectionSettings settings) const {
  auto connection = redis::Connection::create(endpoint(), settings);
  if (!connection) {
    throw std::runtime_error("cannot connect to the test redis-server: " +
                             connection.error().message);
  }
  return std::move(connection).value();
}

void RedisTest::SetUp() {
  auto created = RedisServer::create(serverOptions());
  ASSERT_TRUE(created.ok()) << created.error().message;
  server_ = std::move(created).value();
}

}  // namespace relay::testing
