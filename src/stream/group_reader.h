#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "observability/metrics.h"
#include "redis/connection.h"
#include "redis/health.h"
#include "stream/stream_entry.h"

namespace relay::stream {

/// Where and how a GroupReader reads: ConsumerSettings' names and BLOCK.
struct GroupReadSettings {
  std::string stream;
  std::string group;
  std::string consumer;
  std::chrono::milliseconds block{5'000};
  redis::ReplyLimits limits;  // per entry (ConsumerSettings::entry_limits)
};

/// Reads new messages of the stream through the consumer group (XREADGROUP ... STREAMS <stream>
/// >), on a connection the caller owns: in one call, or sent ahead (request) with its reply
/// taken later (take), so the reader can acknowledge one read while Redis serves the next
/// (docs/pipeline.md "Reading"). Counts failures, keeps the reader's Redis health, and creates
/// the group again when it vanished. Not thread-safe: one per reading thread.
class GroupReader {
 public:
  GroupReader(GroupReadSettings settings, observability::Metrics& metrics, redis::Health& health)
      : settings_(std::move(settings)), metrics_(metrics), health_(health) {}

  /// Creates the group when it is missing: at 0 the first time, at its recorded position after
  /// it was destroyed (group_keeper.h; counted in relay_group_recreated_total). An existing
  /// group is fine.
  redis::Status ensureGroup(redis::Connection& redis) const;
  /// One XREADGROUP COUNT `count` BLOCK ...: its messages (none when BLOCK passed).
  redis::Result<std::vector<StreamEntry>> read(redis::Connection& redis, int count);
  /// Sends an XREADGROUP COUNT `count` without BLOCK (it answers at once, empty when nothing
  /// is new) and without waiting for its reply.
  redis::Status request(redis::Connection& redis, int count);
  /// The reply of the request() of `count` sent on `redis`. A cluster's MOVED or ASK reply to
  /// it is no failure: the same read (still without BLOCK) is made again where the redirect
  /// says.
  redis::Result<std::vector<StreamEntry>> take(redis::Connection& redis, int count);

 private:
  std::vector<std::string> command(int count, bool block) const;
  /// One XREADGROUP, following a cluster redirect; with `block`, BLOCK as configured.
  redis::Result<std::vector<StreamEntry>> readNow(redis::Connection& redis, int count, bool block);
  redis::Error failed(redis::Connection& redis, redis::Error error);

  GroupReadSettings settings_;
  observability::Metrics& metrics_;
  redis::Health& health_;
};

}  // namespace relay::stream
