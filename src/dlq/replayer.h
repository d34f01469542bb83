#pragma once

#include <optional>
#include <string>

#include "app/snapshot.h"
#include "dlq/entry.h"
#include "redis/connection.h"
#include "runtime/runtime.h"

namespace relay::dlq {

/// How one replay ended.
struct ReplayResult {
  enum class Verdict {
    kSucceeded,  // the handler succeeded and the entry is gone (removed, or already gone)
    kFailed,     // the handler ran and failed: the entry stays
    kRefused,    // the entry never reached a handler (malformed, oversized, schedule): nothing ran
    kNotRunnable,   // the app, its template, the handler or the runtime cannot run it now
    kRemoveFailed,  // the handler succeeded but removing the entry failed
  };
  Verdict verdict = Verdict::kNotRunnable;
  /// One line saying what happened, for people (`relay dlq replay`, the console).
  std::string message;
  std::optional<runtime::Outcome> outcome;  // once the handler ran
};

/// The one replay of a dead-letter entry (docs/operations.md "Dead-letter queue: `relay dlq`"),
/// shared by `relay dlq replay` and `relay console`: runs the recorded app/handler once with the
/// recorded event (RELAY_TRIGGER=replay, the original message id, attempt = recorded attempts + 1)
/// through `runtime`, against the apps of `snapshot` as they are now, outside the stream
/// lifecycle; success XDELs the entry, anything else leaves it. Entries that never reached a
/// handler are refused (Entry::refusal) before anything runs. Blocks while the handler runs.
class Replayer {
 public:
  Replayer(const app::Snapshot& snapshot, runtime::Runtime& runtime);

  ReplayResult replay(redis::Connection& redis, const std::string& dlq_key, const Entry& entry,
                      runtime::OutputSink& output) const;

 private:
  const app::Snapshot& snapshot_;
  runtime::Runtime& runtime_;
};

}  // namespace relay::dlq
