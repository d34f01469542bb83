#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "invocation/message.h"
#include "redis/errors.h"
#include "redis/reply.h"
#include "redis/reply_filter.h"

namespace relay::stream {

/// One stream entry as read: the lifecycle's Message (one concept, one home).
using StreamEntry = invocation::Message;

/// A message whose workers kept dying while they held it (docs/pipeline.md "Poison messages"):
/// its id, how many times, its event's size and first bytes.
struct PoisonMessage {
  std::string id;
  long long deaths = 0;
  long long event_bytes = 0;
  std::string event_head;
};

/// One page of messages taken over (XAUTOCLAIM, a sweep's or the due poller's script): the
/// cursor to continue from ("0-0" when done), the claimed entries, the ids whose bodies no
/// longer exist, and the poison messages left where they are for their DLQ entry.
struct AutoClaimPage {
  std::string next = "0-0";
  std::vector<StreamEntry> entries;
  std::vector<std::string> deleted;
  std::vector<PoisonMessage> poison;
};

/// What a read of stream entries may bring into memory (docs/operations.md "Memory"): a value
/// of at most `max_event_bytes` (MAX_EVENT_BYTES), at most twice that in one entry's values,
/// at most invocation::kMaxMessageItems items; past them, values arrive cut to
/// invocation::kKeptValueBytes and items are
/// dropped, never pulled whole. parseEntries() records what was cut.
redis::ReplyLimits entryReplyLimits(std::size_t max_event_bytes);

/// Parses an array of `[id, [field, value, ...]]` (a nil body is a deleted entry); values the
/// read cut (entryReplyLimits) are kept as their first bytes and listed in Message::cut.
redis::Result<std::vector<StreamEntry>> parseEntries(redis::ReplyView entries);
/// Parses an XREADGROUP reply for one stream (nil: nothing arrived within BLOCK).
redis::Result<std::vector<StreamEntry>> parseReadGroup(redis::ReplyView reply);
/// Parses an XAUTOCLAIM reply (Redis 7: three elements; 6.2: two).
redis::Result<AutoClaimPage> parseAutoClaim(redis::ReplyView reply);

}  // namespace relay::stream
