#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>

#include "app/registry.h"
#include "common/clock.h"
#include "invocation/backoff.h"
#include "invocation/invocation_store.h"
#include "observability/logger.h"
#include "observability/metrics.h"
#include "runtime/runtime.h"
#include "stream/attempt_journal.h"
#include "stream/concurrency_limiter.h"
#include "stream/message_decoder.h"
#include "stream/stats_recorder.h"
#include "stream/stream_entry.h"

namespace relay::stream {

class Classifier;

/// Fixed internals and configuration of dispatch. Tests shorten the waits and the backoff
/// through this struct; the `relay` binary only sets what section 1 of relay.md configures.
struct DispatchSettings {
  std::string consumer;
  std::size_t max_event_bytes = kDefaultMaxEventBytes;
  /// How long a matched invocation waits for a concurrency slot before its message is left
  /// pending for a later reclaim.
  std::chrono::milliseconds slot_wait = std::chrono::seconds(10);
  /// A claim lives for the rule's timeout, the kill grace and this margin; after that a
  /// reclaiming replica may take over.
  std::chrono::milliseconds claim_margin = std::chrono::seconds(30);
  /// REDIS_INVOCATION_RETENTION (0: keep forever).
  std::chrono::milliseconds invocation_retention = std::chrono::hours(24 * 7);
  invocation::BackoffTable backoff;
};

/// What became of one delivery.
enum class Delivery {
  kAcked,    // every invocation terminal (or unmatched, malformed): acknowledged
  kPending,  // something unresolved: left in the PEL for a later reclaim
  kStale,    // another delivery already finished the message
};

/// Runs one delivered message through classification, the invocation lifecycle, the DLQ and
/// the ACK (events.md); a schedule occurrence (`relay_schedule`) skips classification and runs
/// its schedule's current handler through the same lifecycle (relay.md section 6).
/// Thread-safe: many messages are processed at once, each call with its own Connection.
class Dispatcher {
 public:
  Dispatcher(DispatchSettings settings, invocation::InvocationStore& store,
             const app::Registry& registry, runtime::Runtime& runtime, ConcurrencyLimiter& limiter,
             observability::Metrics& metrics, observability::Logger& logger, Clock& clock);
  ~Dispatcher();

  /// Processes one delivery; blocks while its matching handlers run one after another. Once
  /// `stopping` is set no further handler starts (the message stays pending).
  Delivery process(redis::Connection& redis, const StreamEntry& entry,
                   const std::atomic<bool>& stopping);

  const DispatchSettings& settings() const { return settings_; }

 private:
  struct Invocation;
  /// A message that can never run, as its DLQ entry describes it.
  struct Unrunnable {
    std::string_view kind;  // malformed | oversized | schedule: relay_dlq_entries_total{reason}
    std::string reason;
    std::string event;
    std::string app = "-";  // `-` unless known
    std::string handler = "-";
  };
  Delivery processSchedule(redis::Connection& redis, const StreamEntry& entry,
                           const std::atomic<bool>& stopping);
  /// Runs the invocations of one message one at a time, then dead-letters the exhausted ones
  /// and acknowledges once every one is terminal.
  Delivery runToTerminal(redis::Connection& redis, const StreamEntry& entry,
                         std::vector<Invocation>& invocations, const std::atomic<bool>& stopping);
  Delivery deadLetterMessage(redis::Connection& redis, const StreamEntry& entry,
                             const Unrunnable& what);
  bool runInvocation(redis::Connection& redis, const StreamEntry& entry, Invocation& invocation);
  bool writeOwedEntries(redis::Connection& redis, const StreamEntry& entry,
                        std::vector<Invocation>& invocations);
  Delivery acknowledge(redis::Connection& redis, const std::string& id, bool has_state);
  long long deliveryCount(redis::Connection& redis, const std::string& id);
  std::shared_ptr<const Classifier> classifier();

  DispatchSettings settings_;
  invocation::InvocationStore& store_;
  const app::Registry& registry_;
  runtime::Runtime& runtime_;
  ConcurrencyLimiter& limiter_;
  observability::Metrics& metrics_;
  observability::Logger& logger_;
  Clock& clock_;
  StatsRecorder stats_;     // relay:<stream>:stats, next to the metrics
  AttemptJournal journal_;  // relay:<stream>:attempts:..., for the console
  std::mutex classifier_mutex_;
  std::shared_ptr<const Classifier> classifier_;
};

}  // namespace relay::stream
