#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "invocation/keys.h"
#include "redis/connection.h"
#include "stream/stream_entry.h"

namespace relay::stream {

/// One consumer of the group as XINFO CONSUMERS shows it.
struct GroupConsumer {
  std::string name;
  long long pending = 0;
};

/// The group's consumers (XINFO CONSUMERS).
redis::Result<std::vector<GroupConsumer>> groupConsumers(redis::Connection& redis,
                                                         std::string_view stream,
                                                         std::string_view group);

/// One pending message a sweep takes over, and whether its owner's worker is gone (no
/// heartbeat: docs/pipeline.md "Poison messages").
struct IdleMessage {
  std::string id;
  bool owner_dead = false;
};

/// docs/pipeline.md "Poison messages": after `deaths` takeovers from a dead owner before its
/// plan was recorded, a message is not delivered again (0: never); the first `shown` bytes of
/// its event come back for its DLQ entry, never the whole of it.
struct PoisonRule {
  int deaths = 3;
  std::size_t shown = 256;
};

/// Takes over `messages` for `consumer` (XCLAIM at `min_idle`, so a message another delivery
/// refreshed meanwhile stays where it is), in one script call: the entries taken, the ids whose
/// stream entry is gone (trimmed or deleted: the caller counts and clears them, docs/
/// pipeline.md "Missing payloads"), and the poison messages (counted when taken from a dead
/// owner: not taken at the limit). An id no longer pending, or not idle enough, is in none.
/// `limits`: what a taken entry may bring into memory (ConsumerSettings::entry_limits,
/// docs/operations.md "Memory"); null reads entries whole.
redis::Result<AutoClaimPage> claimIdle(redis::Connection& redis, const invocation::StreamKeys& keys,
                                       std::string_view consumer,
                                       std::chrono::milliseconds min_idle,
                                       const std::vector<IdleMessage>& messages,
                                       const PoisonRule& poison = {0, 0},
                                       const redis::ReplyLimits* limits = nullptr);

/// Parses a {entries, gone ids} script reply (claimIdle's, the due-retry poller's).
redis::Result<AutoClaimPage> parseClaimed(redis::ReplyView reply);

}  // namespace relay::stream
