// `relay start` as a systemd Type=notify service (docs/deployment.md "systemd"), against a real
// NOTIFY_SOCKET: a unix datagram socket this test listens on, as systemd does. READY=1 comes once
// the consumer group exists, WATCHDOG=1 while the reader turns (and stops while it hangs),
// STOPPING=1 when SIGTERM begins the stop.
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "fakes/temp_dir.h"
#include "support/redis_server.h"
#include "support/spawned_process.h"

namespace relay::testing {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

/// The notify socket: every datagram received, with when it came.
class NotifyListener {
 public:
  explicit NotifyListener(std::string path) : path_(std::move(path)) {
    fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    path_.copy(address.sun_path, sizeof address.sun_path - 1);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    timeval tick{0, 100'000};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tick, sizeof tick);
  }
  ~NotifyListener() { ::close(fd_); }

  struct Message {
    Clock::time_point at;
    std::string text;
  };

  /// Receives until `done` holds for the messages so far, or `timeout`; returns whether it did.
  template <typename Done>
  bool receiveUntil(Done done, Clock::duration timeout) {
    const auto deadline = Clock::now() + timeout;
    while (!done(messages_) && Clock::now() < deadline) {
      char buffer[4096];
      const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n > 0) messages_.push_back({Clock::now(), std::string(buffer, n)});
    }
    return done(messages_);
  }
  void receiveFor(Clock::duration duration) {
    receiveUntil([](const auto&) { return false; }, duration);
  }
  const std::vector<Message>& messages() const { return messages_; }
  static bool has(const std::vector<Message>& messages, const std::string& state) {
    return std::any_of(messages.begin(), messages.end(),
                       [&](const Message& m) { return m.text.find(state) != std::string::npos; });
  }
  std::vector<Clock::time_point> times(const std::string& state) const {
    std::vector<Clock::time_point> at;
    for (const Message& m : messages_) {
      if (m.text.find(state) != std::string::npos) at.push_back(m.at);
    }
    return at;
  }

 private:
  std::string path_;
  int fd_ = -1;
  std::vector<Message> messages_;
};

class SystemdNotify : public RedisTest {
 protected:
  RedisServerOptions serverOptions() const override {
    RedisServerOptions options;
    options.extra_args = {"--enable-debug-command", "yes"};  // DEBUG SLEEP: a Redis that hangs
    return options;
  }
  void SetUp() override {
    RedisTest::SetUp();
    ::chmod(dir_.path().c_str(), 0755);
    dir_.write("apps/hello/template.yaml",
               "runtime: exec\nevents:\n  - handler: bin/h.sh\n    pattern: {kind: [hi]}\n");
    dir_.write("apps/hello/bin/h.sh", "#!/bin/sh\necho hi\n", 0755);
  }
  std::unique_ptr<SpawnedProcess> relay(const std::string& uri, const std::string& watchdog_usec) {
    return std::make_unique<SpawnedProcess>(
        std::vector<std::string>{RELAY_BINARY, "start", "--runtime", "process"},
        std::vector<std::string>{"REDIS_URI=" + uri,
                                 "RELAY_APPS=" + (dir_.path() / "apps").string(),
                                 "RELAY_HTTP_ADDR=127.0.0.1:0", "RELAY_CONSUMER=notified",
                                 "NOTIFY_SOCKET=" + socketPath(), "WATCHDOG_USEC=" + watchdog_usec},
        (dir_.path() / "relay.log").string());
  }
  std::string socketPath() const { return (dir_.path() / "notify").string(); }

  TempDir dir_;
};

TEST_F(SystemdNotify, ReadyOnceTheGroupExistsThenStoppingOnSigterm) {
  NotifyListener systemd(socketPath());
  auto worker = relay(server().uri(), "2000000");
  ASSERT_TRUE(systemd.receiveUntil([](const auto& m) { return NotifyListener::has(m, "READY=1"); },
                                   seconds(30)))
      << worker->log();
  const auto& ready =
      *std::find_if(systemd.messages().begin(), systemd.messages().end(),
                    [](const auto& m) { return m.text.find("READY=1") != std::string::npos; });
  EXPECT_NE(ready.text.find("STATUS=consuming events as notified in group relay, 1 app loaded"),
            std::string::npos)
      << ready.text;
  auto redis = server().connect();
  auto groups = redis->command({"XINFO", "GROUPS", "events"});
  ASSERT_TRUE(groups.ok()) << "READY=1 came before the group existed";
  worker->signal(SIGTERM);
  EXPECT_TRUE(systemd.receiveUntil(
      [](const auto& m) { return NotifyListener::has(m, "STOPPING=1"); }, seconds(30)))
      << worker->log();
  EXPECT_NE(worker->wait(seconds(30)), -1);
}

TEST_F(SystemdNotify, NoReadyWhileRedisIsUnreachable) {
  NotifyListener systemd(socketPath());
  // A port nothing listens on: the worker runs and retries, but the group cannot exist.
  auto worker = relay("127.0.0.1:1", "2000000");
  systemd.receiveFor(seconds(4));
  EXPECT_FALSE(NotifyListener::has(systemd.messages(), "READY=1")) << worker->log();
  // Its reader still turns (reconnect attempts): no hang, so the watchdog is fed.
  EXPECT_GE(systemd.times("WATCHDOG=1").size(), 2u) << worker->log();
}

TEST_F(SystemdNotify, TheWatchdogStarvesWhileTheReaderHangsAndResumesAfter) {
  NotifyListener systemd(socketPath());
  auto worker = relay(server().uri(), "2000000");  // fed every second, alive within 2 s
  ASSERT_TRUE(systemd.receiveUntil([](const auto& m) { return NotifyListener::has(m, "READY=1"); },
                                   seconds(30)));
  systemd.receiveFor(seconds(3));
  const std::size_t before = systemd.times("WATCHDOG=1").size();
  EXPECT_GE(before, 2u) << worker->log();
  // Redis stops answering for 12 s: the reader's XREADGROUP hangs until its command times out.
  auto blocker = server().connect();
  const auto hang_started = Clock::now();
  ASSERT_TRUE(blocker->appendCommand({"DEBUG", "SLEEP", "12"}).ok());
  ASSERT_TRUE(blocker->flush().ok());
  systemd.receiveFor(seconds(16));
  const auto pings = systemd.times("WATCHDOG=1");
  Clock::duration longest_gap{};
  for (std::size_t i = 1; i < pings.size(); ++i) {
    if (pings[i] < hang_started) continue;
    longest_gap = std::max(longest_gap, pings[i] - std::max(pings[i - 1], hang_started));
  }
  EXPECT_GT(longest_gap, seconds(4)) << "pings went on while the reader hung";
  EXPECT_GT(pings.back(), hang_started + seconds(10)) << "pings did not resume";
}

}  // namespace
}  // namespace relay::testing
