#pragma once
// Filling a benchmark's stream: the in-process benchmarks' one way to publish N events.
#include <string>
#include <vector>

#include "redis/connection.h"

namespace relay::bench {

/// Creates `stream` with `group` (if missing) and appends `messages` entries with this `event`
/// field, pipelined 500 at a time. Returns their ids in order.
inline std::vector<std::string> addEvents(redis::Connection& redis, const std::string& stream,
                                          long messages, const std::string& event,
                                          const std::string& group = "relay") {
  (void)redis.command({"XGROUP", "CREATE", stream, group, "0", "MKSTREAM"});
  std::vector<std::string> ids;
  std::vector<std::vector<std::string>> batch;
  for (long i = 0; i < messages; ++i) {
    batch.push_back({"XADD", stream, "*", "event", event});
    if (batch.size() == 500 || i + 1 == messages) {
      auto replies = redis.pipeline(batch);
      if (replies.ok()) {
        for (auto& reply : *replies) {
          if (reply.ok() && reply->string()) ids.emplace_back(*reply->string());
        }
      }
      batch.clear();
    }
  }
  return ids;
}

}  // namespace relay::bench
