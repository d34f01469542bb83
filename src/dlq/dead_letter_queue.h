#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dlq/dlq_filter.h"
#include "dlq/entry.h"
#include "redis/connection.h"
#include "stream/stream_entry.h"

namespace relay::dlq {

/// MAX_EVENT_BYTES's default: what a reader of the DLQ lets a value hold when not told.
inline constexpr std::size_t kDefaultEntryBytes = 256 * 1024;

/// One page of a filtered listing, newest first.
struct DlqPage {
  std::vector<Entry> entries;
  /// Every entry the filter selects at or below `upto` (not just this page's).
  long long total = 0;
  /// Pass as `before` for the next page; empty when this page is the last.
  std::string next;
  /// The newest id the selection considered: a bulk action confirmed on this page acts on
  /// exactly the entries the filter selects at or below it (later entries are not included).
  std::string upto;
};

/// The ids a filter selects, newest first, and the bound they were read up to.
struct DlqSelection {
  std::vector<std::string> ids;
  std::string upto;
};

/// Reads and removes entries of one dead-letter stream (`relay:<stream>:dlq`). Filters are
/// applied here, over XREVRANGE batches: a listing reads the entries of its time range once.
/// Not thread-safe (it uses the caller's Connection); every call blocks on Redis.
class DeadLetterQueue {
 public:
  /// Reads entries cut to `limits` (docs/operations.md "Memory": a dead-letter entry is read
  /// like any entry, never whole when someone wrote a huge one into the stream).
  DeadLetterQueue(redis::Connection& redis, std::string key, std::size_t batch = 500,
                  redis::ReplyLimits limits = stream::entryReplyLimits(kDefaultEntryBytes));

  const std::string& key() const { return key_; }
  /// The entry `id`, or nullopt when there is none.
  redis::Result<std::optional<Entry>> find(std::string_view id);
  /// XLEN.
  redis::Result<long long> length();
  /// The entries `filter` selects at or below `upto` (an id; empty: the newest entry now) and
  /// older than `before` (an id from a previous page's `next`; empty: from the top), at most
  /// `limit`, with the selection's total. Pass the first page's `upto` to the next pages so the
  /// total and the pages stay one selection while new entries arrive.
  redis::Result<DlqPage> page(const DlqFilter& filter, std::string_view upto,
                              std::string_view before, std::size_t limit);
  /// Every id `filter` selects at or below `upto` (empty: the newest entry now).
  redis::Result<DlqSelection> select(const DlqFilter& filter, std::string_view upto);
  /// XDELs `ids` (in batches); returns how many were there.
  redis::Result<long long> remove(const std::vector<std::string>& ids);

 private:
  /// Calls `visit` for every entry from `newest` (inclusive bound) down to the filter's oldest
  /// bound, newest first, until it returns false.
  redis::Status scan(const DlqFilter& filter, const std::string& newest,
                     const std::function<bool(Entry&)>& visit);
  /// The id of the newest entry, or empty when the stream is empty.
  redis::Result<std::string> newestId();

  redis::Connection& redis_;
  std::string key_;
  std::size_t batch_;
  redis::ReplyLimits limits_;
};

}  // namespace relay::dlq
