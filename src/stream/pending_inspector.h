#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "invocation/catalog.h"
#include "invocation/keys.h"
#include "redis/connection.h"
#include "stream/pending_reason.h"

namespace relay::stream {

/// Reads what Redis holds about the group's pending messages and explains each
/// (pending_reason.h): the PEL entry, the state hash, the due index, the paused apps
/// (invocation::readPausedApps) and the paused queue, the owner's heartbeat, Redis's clock. Read
/// only. Stateless; each call on the caller's connection, a few round trips whatever the number
/// of messages.
class PendingInspector {
 public:
  /// `catalog` (may be null) tells unknown and unavailable apps apart; it must outlive this.
  explicit PendingInspector(invocation::StreamKeys keys, invocation::Catalog* catalog = nullptr)
      : keys_(std::move(keys)), catalog_(catalog) {}

  /// The group's oldest pending message (XPENDING - + 1), explained; nullopt when nothing is
  /// pending. A missing group is an error (NOGROUP).
  redis::Result<std::optional<PendingReport>> oldest(redis::Connection& redis) const;
  /// Up to `count` pending messages with ids above `after` (empty: from the oldest), oldest
  /// first, explained; with `payloads`, whether each one's stream entry still exists too.
  redis::Result<std::vector<PendingReport>> page(redis::Connection& redis, std::string_view after,
                                                 int count, bool payloads) const;
  /// The messages `ids`, explained; nullopt for one that is not pending in the group.
  redis::Result<std::vector<std::optional<PendingReport>>> find(redis::Connection& redis,
                                                                const std::vector<std::string>& ids,
                                                                bool payloads) const;
  /// Explains PEL entries already listed (the paused apps, then one pipeline, plus one for
  /// parked messages).
  redis::Result<std::vector<PendingReport>> explain(redis::Connection& redis,
                                                    const std::vector<PendingEntry>& entries,
                                                    bool payloads) const;

  const invocation::StreamKeys& keys() const { return keys_; }

 private:
  invocation::StreamKeys keys_;
  invocation::Catalog* catalog_;
};

/// The entries of an extended XPENDING reply (`[[id, consumer, idle, deliveries], ...]`).
redis::Result<std::vector<PendingEntry>> parsePendingEntries(redis::ReplyView reply);

}  // namespace relay::stream
