#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "common/result.h"
#include "redis/endpoint.h"

namespace relay::testing {

/// A loopback TCP proxy in front of a redis-server that can lose a reply the way a failover or
/// a killed connection does: once armed, the next request goes through to the server (its
/// script runs) and, when the server answers, the proxy closes both sides instead of forwarding
/// the reply. It can also refuse new connections for a while (Redis unreachable from the
/// client). One thread accepts, one per connection pumps. Destruction closes everything.
class ReplyDroppingProxy {
 public:
  static Result<std::unique_ptr<ReplyDroppingProxy>> create(int target_port);
  ~ReplyDroppingProxy();
  ReplyDroppingProxy(const ReplyDroppingProxy&) = delete;
  ReplyDroppingProxy& operator=(const ReplyDroppingProxy&) = delete;

  /// The proxy's address as a TCP endpoint.
  redis::Endpoint endpoint() const;
  /// Loses the next reply from the server, on whichever connection it comes.
  void dropNextReply() { armed_ = true; }
  /// While true, new connections are closed as soon as they are accepted.
  void setRefusing(bool refusing) { refusing_ = refusing; }
  /// Replies lost so far.
  int dropped() const { return dropped_.load(); }

 private:
  ReplyDroppingProxy(int listener, int port, int target_port);
  void acceptLoop();
  void pump(int client, int server);

  int listener_;
  int port_;
  int target_port_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> armed_{false};
  std::atomic<bool> refusing_{false};
  std::atomic<int> dropped_{0};
  std::mutex mutex_;
  std::vector<std::thread> threads_;
  std::thread acceptor_;
};

}  // namespace relay::testing
