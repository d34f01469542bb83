#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/replay_copy.h"
#include "common/result.h"
#include "redis/connection.h"
#include "redis/endpoint.h"
#include "schedule/occurrence.h"

namespace relay::catalog {

/// `relay:<stream>:occ:<app>:<schedule>:<scheduled-at>`: an occurrence's dedupe key
/// (docs/schedules.md "Publication"), whose value is the id of the entry that published it.
std::string occurrenceKey(std::string_view stream, const schedule::Occurrence& occurrence);

/// Whether Relay's publication script published an occurrence as a given stream entry: the
/// proof that an occurrence which is no firing of its schedule's current cron was a firing of
/// the cron some worker had when it published it (docs/schedules.md "Rolling deploys and cron
/// edits"). Thread-safe.
class PublicationCheck {
 public:
  virtual ~PublicationCheck() = default;
  /// True when the occurrence's dedupe key holds `message_id`; false when it is missing (never
  /// published, or its 48 h expired) or names another entry. An Error when it cannot tell now.
  virtual Result<bool> publishedAs(const schedule::Occurrence& occurrence,
                                   std::string_view message_id) = 0;
  /// True when replay `copy.replay`'s copies hash records `message_id` as the copy of its
  /// original (the dead letter for a `dlq` copy): the proof that a replay driver published it,
  /// which a producer writing a `relay_replay` field cannot give (docs/replay.md "Copies").
  /// False when the record is missing or names another entry; an Error when it cannot tell now.
  virtual Result<bool> copiedAs(const ReplayCopy& copy, std::string_view message_id) = 0;
};

/// The check over Redis: one GET of the dedupe key, on a connection of its own made on first use
/// and again after a failure. Blocks for that round trip; callers are serialized on a mutex (the
/// check is only asked about occurrences that are no firing of their cron: rare).
class RedisPublicationCheck final : public PublicationCheck {
 public:
  RedisPublicationCheck(redis::Endpoint endpoint, std::string stream)
      : endpoint_(std::move(endpoint)), stream_(std::move(stream)) {}

  Result<bool> publishedAs(const schedule::Occurrence& occurrence,
                           std::string_view message_id) override;
  Result<bool> copiedAs(const ReplayCopy& copy, std::string_view message_id) override;

 private:
  /// `command`'s reply as a string equal to `expected`, on the shared connection.
  Result<bool> holds(const std::vector<std::string>& command, std::string_view expected);

  redis::Endpoint endpoint_;
  std::string stream_;
  std::mutex mutex_;
  std::unique_ptr<redis::Connection> connection_;
};

}  // namespace relay::catalog
