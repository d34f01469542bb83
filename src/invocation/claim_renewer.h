#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "common/clock.h"
#include "common/stop_signal.h"
#include "invocation/lifecycle_store.h"
#include "observability/logger.h"
#include "observability/metrics.h"

namespace relay::invocation {

/// Fixed internals of renewal (docs/pipeline.md "Claims"); tests shorten them.
struct RenewerSettings {
  /// How often every running claim is renewed; well below MinPendingIdle, so the message of a
  /// running handler never idles long enough in the PEL to be reclaimed.
  std::chrono::milliseconds interval{10'000};
  ClaimTimes claim;
};

/// Keeps the claims of running handlers alive: every interval it extends each claim (for as long
/// as the handler's timeout allows) and refreshes its message's PEL idle time (XCLAIM ... JUSTID
/// by the owner), so no replica takes over a live invocation, and it tells the store that a
/// worker reaches it (LifecycleStore::heartbeat: docs/pipeline.md "Outages"). It also repeats,
/// every interval until they succeed, however long that takes, the lifecycle calls whose reply
/// never came back after the store's own retries (a release of a claim whose handler never
/// started, the outcome of one that ran), keeping the claim of such an outcome alive meanwhile:
/// every verb is idempotent for its token, so a Redis outage of any length neither charges an
/// unstarted attempt nor turns a recorded outcome into a failure. One per worker, with its own
/// store; track() and retryLater() are thread-safe.
class ClaimRenewer {
 public:
  ClaimRenewer(RenewerSettings settings, LifecycleStore& store, observability::Metrics& metrics,
               observability::Logger& logger, Clock& clock);

  struct Claim {
    std::string id;
    std::string field;
    std::string token;
    MonoTime until;    // start + timeout + kill grace: no renewal beyond it
    FlowControl flow;  // the invocation's: the key slots the claim holds are renewed with it
  };

  /// Untracks its claim when destroyed.
  class Tracked {
   public:
    Tracked(ClaimRenewer* renewer, std::uint64_t key) : renewer_(renewer), key_(key) {}
    Tracked(Tracked&& other) noexcept : renewer_(other.renewer_), key_(other.key_) {
      other.renewer_ = nullptr;
    }
    Tracked(const Tracked&) = delete;
    Tracked& operator=(const Tracked&) = delete;
    Tracked& operator=(Tracked&&) = delete;
    ~Tracked();
    /// The handler started now: renew until `until` (its start + timeout + kill grace) rather
    /// than from the claim, so a slow start (a loaded docker daemon) never lets it lapse.
    void renewUntil(MonoTime until);

   private:
    ClaimRenewer* renewer_;
    std::uint64_t key_;
  };

  /// Starts renewing `claim` until the returned handle is destroyed.
  [[nodiscard]] Tracked track(Claim claim);
  /// Repeats `call` every interval until it returns true (the store answered), whatever the
  /// time: a verb's verdict is the same however late it lands. `claim`, when given, stays
  /// tracked (renewed) until then. `what` names it in the log.
  void retryLater(std::string what, std::function<bool(LifecycleStore&)> call,
                  std::optional<Tracked> claim = std::nullopt);
  /// Repeats the owed calls until none is left or `patience` has passed (a worker stopping
  /// gracefully after its handlers finished). Returns how many are still owed. Blocks.
  std::size_t settleOwed(std::chrono::milliseconds patience);
  /// Renews every tracked claim and repeats the owed calls once (the loop's body; tests call it
  /// directly).
  void renewAll();
  std::size_t owed() const;
  /// Gives back every tracked claim, for a worker that stops at once (its handlers die with
  /// it): nothing is charged, and each invocation is due again once its handler's timeout would
  /// have passed, so a replica never overlaps a handler that is still being killed. Returns how
  /// many were released.
  std::size_t releaseAll();
  /// Renews every interval until stop() (which ends the wait at once). Blocks.
  void run();
  /// Thread-safe, non-blocking.
  void stop();
  std::size_t tracked() const;

 private:
  void untrack(std::uint64_t key);
  void renewUntil(std::uint64_t key, MonoTime until);
  bool stillTracked(std::uint64_t key) const;

  RenewerSettings settings_;
  LifecycleStore& store_;
  observability::Metrics& metrics_;
  observability::Logger& logger_;
  Clock& clock_;
  StopSignal stopping_;
  std::mutex store_mutex_;  // the store serves one call at a time
  mutable std::mutex mutex_;
  std::map<std::uint64_t, Claim> claims_;
  struct Owed {
    std::string what;
    std::function<bool(LifecycleStore&)> call;
    std::shared_ptr<Tracked> claim;  // renewed until the call is done
  };
  std::list<Owed> owed_;
  std::uint64_t next_key_ = 0;
};

}  // namespace relay::invocation
