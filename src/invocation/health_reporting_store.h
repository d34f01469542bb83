#pragma once

#include <memory>

#include "invocation/lifecycle_store.h"
#include "invocation/store_health.h"

namespace relay::invocation {

/// A LifecycleStore that tells `health` how each transition of the store it wraps went (the
/// worker wraps every RedisLifecycleStore in one, so /healthz sees failing lifecycle scripts:
/// docs/operations.md "HTTP endpoints"). The attempt journal is not a transition (a record for
/// the console, best effort) and is not reported. Thread-safety is the wrapped store's.
class HealthReportingStore final : public LifecycleStore {
 public:
  HealthReportingStore(std::unique_ptr<LifecycleStore> store, StoreHealth& health)
      : store_(std::move(store)), health_(health) {}

  Result<StartVerdict> start(std::string_view id, const StartRequest& request) override;
  Result<BeginVerdict> begin(std::string_view id, std::string_view field,
                             std::string_view token) override;
  Status heartbeat(const ClaimTimes& times) override;
  Result<CompleteVerdict> complete(std::string_view id, std::string_view field,
                                   std::string_view token, const AttemptResult& result,
                                   const DlqEntry* dlq, const AttemptRecord* finished = nullptr,
                                   const FlowControl* flow = nullptr) override;
  Result<ReleaseVerdict> release(std::string_view id, std::string_view field,
                                 std::string_view token, std::chrono::milliseconds retry_after,
                                 bool unjournal = false,
                                 const FlowControl* flow = nullptr) override;
  Result<RenewVerdict> renew(std::string_view id, std::string_view field, std::string_view token,
                             std::chrono::milliseconds extend,
                             const FlowControl* flow = nullptr) override;
  Result<DlqVerdict> writeDlq(std::string_view id, std::string_view field,
                              const DlqEntry& entry) override;
  Result<AckVerdict> acknowledge(std::string_view id, bool obsolete_occurrence = false) override;
  Status clearMissing(std::string_view id) override;
  Result<CancelVerdict> cancel(std::string_view id, const CancelRequest& request) override;
  Status journal(std::string_view id, const AttemptRecord& record) override;
  std::vector<Result<SettleVerdict>> settle(const std::vector<SettleRequest>& requests) override;

 private:
  /// Reports `result` under `op` and passes it on.
  template <typename R>
  R report(std::string_view op, R result);

  std::unique_ptr<LifecycleStore> store_;
  StoreHealth& health_;
};

}  // namespace relay::invocation
