#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "app/snapshot.h"
#include "catalog/classifier.h"
#include "common/result.h"
#include "history/replay_record.h"
#include "pattern/pattern.h"
#include "stream/stream_entry.h"

namespace relay::history {

/// Which entries of a stream window a replay copies (docs/replay.md "Copies"): the events the
/// chosen app's rules (one rule's with a handler) match at the entry's publication time (its
/// id's milliseconds), and the `--filter` pattern too when there is one. Relay's own entries
/// (schedule occurrences, earlier copies), malformed and oversized entries are never copied.
/// The one decision the driver publishes by and `relay replay --dry-run` counts by. Pure.
class ReplaySelection {
 public:
  /// kInvalidArgument naming the problem: the app is not loaded (or invalid), it has no rule
  /// for the handler, the filter does not compile.
  static Result<ReplaySelection> create(std::shared_ptr<const app::Snapshot> snapshot,
                                        const ReplaySpec& spec, std::size_t max_event_bytes);

  /// Whether `original` is copied.
  bool selects(const stream::StreamEntry& original) const;

 private:
  ReplaySelection() = default;

  std::shared_ptr<const catalog::Classifier> rules_;
  std::shared_ptr<const pattern::Pattern> filter_;
  std::string app_;
  std::string handler_;
  std::size_t max_event_bytes_ = 0;
};

/// The instant of a stream id's milliseconds (0 for what is no id).
Instant instantOfId(const std::string& id);

}  // namespace relay::history
