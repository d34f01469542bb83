#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "redis/connection.h"
#include "redis/connection_settings.h"
#include "redis/endpoint.h"
#include "redis/errors.h"
#include "redis/reply.h"

namespace relay::redis {

/// Commands of many threads sent together: each call() joins the calls waiting at that moment
/// in one pipeline on one shared connection, one round trip for all (docs/pipeline.md "Group
/// commit"). The first caller to find no pipeline in flight sends it; a call made while one is
/// in flight waits for it and goes in the next one, which the first of those callers sends. No
/// thread of its own, and no wait for company: a call alone is sent at once.
///
/// Commands keep their own replies and their order on the connection, and nothing else changes
/// for them: each is what it would be on a connection of its own (a script stays atomic; two
/// calls in one pipeline are not one transaction). A transport failure (I/O, timeout, a broken
/// or unreachable connection, a refused login) fails every call of that pipeline with it, as
/// kClosed when the connection could not be made, and no call is sent again here: the caller
/// decides whether its command may be repeated. For `rest` after such a failure every call
/// fails at once with kClosed, unsent (the callers go their own ways, e.g. their own
/// connections with their own retries, instead of queueing behind a dead connection); the first
/// call after it connects again.
///
/// Thread-safe.
class GroupCommit {
 public:
  GroupCommit(Endpoint endpoint, ConnectionSettings settings, Clock& clock,
              std::chrono::milliseconds rest = std::chrono::seconds(1));
  ~GroupCommit();
  GroupCommit(const GroupCommit&) = delete;
  GroupCommit& operator=(const GroupCommit&) = delete;

  /// Sends `command` with the others waiting, and returns its reply (a Redis error reply as
  /// kReply, like Connection::command()).
  Result<Reply> call(std::vector<std::string> command);

  /// Pipelines sent (or tried: one whose connection could not be made counts) and their calls
  /// so far: calls per round trip.
  struct Counts {
    std::uint64_t pipelines = 0;
    std::uint64_t calls = 0;
  };
  Counts counts() const;
  /// Calls waiting for the next pipeline now (not those of the pipeline in flight).
  std::size_t waiting() const;

 private:
  class Wakeup;
  struct Call;

  // Sends `batch` in one pipeline on connection_; one reply per call, never an exception. Only
  // the sender (one thread at a time) calls it.
  std::vector<Result<Reply>> send(std::vector<Call*>& batch) noexcept;
  // The sender's part of call(): sends what waits (`mine` among it), answers every call of the
  // pipeline and hands the sending on. Called with `lock` held; returns `mine`'s reply.
  Result<Reply> sendWaiting(Call& mine, std::unique_lock<std::mutex>& lock);

  const Endpoint endpoint_;
  const ConnectionSettings settings_;
  Clock& clock_;
  const std::chrono::milliseconds rest_;
  std::unique_ptr<Connection> connection_;  // the sender's alone

  mutable std::mutex mutex_;
  std::vector<Call*> waiting_;         // calls for the next pipeline, in arrival order
  bool sending_ = false;               // a pipeline is in flight, or its sender is being woken
  std::optional<MonoTime> failed_at_;  // the last pipeline's transport failure, until one works
  Counts counts_;
};

}  // namespace relay::redis
