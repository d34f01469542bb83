#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace relay::catalog {

/// The stream-entry field that marks a replay copy and holds its envelope (docs/replay.md
/// "Copies"); beside it the copy keeps the original's `event` (and `traceparent`, `tracestate`)
/// byte for byte.
inline constexpr std::string_view kReplayField = "relay_replay";

/// Where a replay copy comes from and what it is replayed through. A plain value.
struct ReplayCopy {
  enum class Mode {
    kRules,       // classified against `app`'s rules (only `handler`'s when set) at `original_ms`
    kDeadLetter,  // a dead-letter entry: runs `app`/`handler` as recorded, no matching
  };
  std::string replay;       // the replay's id
  std::string group;        // the consumer group whose apps it is for (other groups ignore it)
  std::string original_id;  // the entry it copies (for kDeadLetter: the message that failed)
  std::string app;
  std::string handler;  // kRules: empty for every rule of the app
  Mode mode = Mode::kRules;
  std::string dlq_id;  // kDeadLetter: the dead-letter entry

  /// When the original was published: the milliseconds of original_id (Redis's clock).
  long long originalMs() const;
  /// The `relay_replay` field: compact JSON.
  std::string envelope() const;
  bool operator==(const ReplayCopy&) const = default;
};

/// Reads an envelope back: a JSON object with the string members `replay`, `group`,
/// `original_id` (a full stream id), `app` (a valid app name), `mode` (`rules` or `dlq`), an
/// optional `handler` (required with `dlq`, with `dlq_id`). Anything else is kInvalidArgument
/// naming the member. Pure; never throws.
Result<ReplayCopy> parseReplayEnvelope(std::string_view json);

}  // namespace relay::catalog
