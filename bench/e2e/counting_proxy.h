#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace relay::bench {

/// A loopback TCP proxy in front of Redis that counts what its clients ask: commands (top-level
/// RESP arrays, by name) and round trips (a burst of client bytes after the server's last
/// answer, so a pipeline counts once). The worker under test connects to it instead of Redis.
class CountingProxy {
 public:
  struct Counts {
    long commands = 0;
    long round_trips = 0;
    std::map<std::string, long> by_command;  // upper-case command name -> count

    Counts operator-(const Counts& earlier) const;
  };

  /// Listens on 127.0.0.1 (a free port) and forwards to `host`:`port`; nullptr on failure.
  static std::unique_ptr<CountingProxy> start(const std::string& host, int port);
  ~CountingProxy();
  CountingProxy(const CountingProxy&) = delete;
  CountingProxy& operator=(const CountingProxy&) = delete;

  int port() const { return port_; }
  Counts counts() const;

 private:
  CountingProxy() = default;
  void loop();

  std::string upstream_host_;
  int upstream_port_ = 0;
  int listen_fd_ = -1;
  int wake_fd_ = -1;  // an eventfd that ends loop()
  int port_ = 0;
  mutable std::mutex mutex_;
  Counts counts_;
  std::thread thread_;
};

}  // namespace relay::bench
