#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <mutex>
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
/// by the owner), so neither a replica nor XAUTOCLAIM takes over a live invocation. It also
/// repeats, every interval until they succeed or their claim would have expired, the lifecycle
/// calls whose reply never came back after the store's own retries (a release of a claim whose
/// handler never started, the outcome of one that ran): every verb is idempotent for its token,
/// so a long Redis outage neither charges an unstarted attempt nor forgets an outcome. One per
/// worker, with its own store; track() and retryLater() are thread-safe.
class ClaimRenewer {
 public:
  ClaimRenewer(RenewerSettings settings, LifecycleStore& store, observability::Metrics& metrics,
               observability::Logger& logger, Clock& clock);

  struct Claim {
    std::string id;
    std::string field;
    std::string token;
    MonoTime until;  // start + timeout + kill grace: no renewal beyond it
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

   private:
    ClaimRenewer* renewer_;
    std::uint64_t key_;
  };

  /// Starts renewing `claim` until the returned handle is destroyed.
  [[nodiscard]] Tracked track(Claim claim);
  /// Repeats `call` every interval until it returns true or `until` passes. `what` names it in
  /// the log.
  void retryLater(std::string what, MonoTime until, std::function<bool(LifecycleStore&)> call);
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
    MonoTime until;
    std::function<bool(LifecycleStore&)> call;
  };
  std::list<Owed> owed_;
  std::uint64_t next_key_ = 0;
};

}  // namespace relay::invocation
