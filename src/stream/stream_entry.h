#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "invocation/message.h"
#include "redis/errors.h"
#include "redis/reply.h"

namespace relay::stream {

/// One stream entry as read: the lifecycle's Message (one concept, one home).
using StreamEntry = invocation::Message;

/// One page of XAUTOCLAIM: the cursor to continue from ("0-0" when done), the claimed entries,
/// and the ids whose bodies no longer exist (Redis removed them from the PEL).
struct AutoClaimPage {
  std::string next = "0-0";
  std::vector<StreamEntry> entries;
  std::vector<std::string> deleted;
};

/// Parses an array of `[id, [field, value, ...]]` (a nil body is a deleted entry).
redis::Result<std::vector<StreamEntry>> parseEntries(redis::ReplyView entries);
/// Parses an XREADGROUP reply for one stream (nil: nothing arrived within BLOCK).
redis::Result<std::vector<StreamEntry>> parseReadGroup(redis::ReplyView reply);
/// Parses an XAUTOCLAIM reply (Redis 7: three elements; 6.2: two).
redis::Result<AutoClaimPage> parseAutoClaim(redis::ReplyView reply);

}  // namespace relay::stream
