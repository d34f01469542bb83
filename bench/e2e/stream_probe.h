#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "redis/connection.h"

namespace relay::bench {

/// The benchmark's own view of the stream and its consumer group, on its own connection.
class StreamProbe {
 public:
  StreamProbe(redis::Connection& redis, std::string stream, std::string group = "relay")
      : redis_(redis), stream_(std::move(stream)), group_(std::move(group)) {}

  /// Deletes the stream, creates it with the group at 0, and appends `messages` copies of
  /// `event` (pipelined in batches).
  void fill(long messages, const std::string& event);
  /// XADD of one event; returns its id (empty on failure).
  std::string add(const std::string& event);

  struct Group {
    long long entries_read = -1;  // delivered to the group
    long long pending = -1;       // delivered, not yet acknowledged
    long long acked() const { return entries_read - pending; }
  };
  Group group();
  /// Whether `consumer` has read from the group yet, or some client is blocked reading it (the
  /// worker is up).
  bool hasConsumer(const std::string& consumer);
  /// How many clients are blocked in XREADGROUP (on an empty stream: one per worker).
  int blockedReaders();

  /// Waits until `total` messages are acknowledged (or `limit` passes, or `alive` turns false)
  /// and returns the acknowledgement rate between 10% and 90% of them (messages per second;
  /// worker start-up and the tail stay out of it). `window` is called at both ends. With
  /// `read`, delivered to the group instead of acknowledged (messages that wait in the group:
  /// deferred by flow control).
  struct Drain {
    double rate = 0;
    long messages = 0;  // acknowledged inside the window
    bool complete = false;
  };
  Drain drain(long total, std::chrono::seconds limit, const std::function<bool()>& alive,
              const std::function<void(bool at_start)>& window, bool read = false);

 private:
  redis::Connection& redis_;
  std::string stream_;
  std::string group_;
};

}  // namespace relay::bench
