#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

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
/// or unreachable connection) fails every call of that pipeline with it and no call is sent
/// again here: the caller decides whether its command may be repeated. The next pipeline
/// connects again.
///
/// Thread-safe.
class GroupCommit {
 public:
  GroupCommit(Endpoint endpoint, ConnectionSettings settings);
  ~GroupCommit();
  GroupCommit(const GroupCommit&) = delete;
  GroupCommit& operator=(const GroupCommit&) = delete;

  /// Sends `command` with the others waiting, and returns its reply (a Redis error reply as
  /// kReply, like Connection::command()).
  Result<Reply> call(std::vector<std::string> command);

  /// Pipelines sent and calls answered so far: calls per round trip.
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

  // Sends `batch` in one pipeline on connection_; one reply per call. Only the sender (one
  // thread at a time) calls it.
  std::vector<Result<Reply>> send(std::vector<Call*>& batch);

  const Endpoint endpoint_;
  const ConnectionSettings settings_;
  std::unique_ptr<Connection> connection_;  // the sender's alone

  mutable std::mutex mutex_;
  std::vector<Call*> waiting_;  // calls for the next pipeline, in arrival order
  bool sending_ = false;        // a pipeline is in flight, or its sender is being woken
  Counts counts_;
};

}  // namespace relay::redis
