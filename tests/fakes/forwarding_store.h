#pragma once

#include <chrono>
#include <string_view>
#include <vector>

#include "invocation/lifecycle_store.h"

namespace relay::testing {

/// A LifecycleStore that passes every call to `inner`: tests derive from it and override the
/// calls they hook (a count, a callback at a chosen moment).
class ForwardingStore : public invocation::LifecycleStore {
 public:
  explicit ForwardingStore(invocation::LifecycleStore& inner) : inner_(inner) {}

  Result<invocation::StartVerdict> start(std::string_view id,
                                         const invocation::StartRequest& request) override {
    return inner_.start(id, request);
  }
  Result<invocation::BeginVerdict> begin(std::string_view id, std::string_view field,
                                         std::string_view token) override {
    return inner_.begin(id, field, token);
  }
  Status heartbeat(const invocation::ClaimTimes& times) override { return inner_.heartbeat(times); }
  Result<invocation::CompleteVerdict> complete(std::string_view id, std::string_view field,
                                               std::string_view token,
                                               const invocation::AttemptResult& result,
                                               const invocation::DlqEntry* dlq,
                                               const invocation::AttemptRecord* finished,
                                               const invocation::FlowControl* flow) override {
    return inner_.complete(id, field, token, result, dlq, finished, flow);
  }
  Result<invocation::ReleaseVerdict> release(std::string_view id, std::string_view field,
                                             std::string_view token,
                                             std::chrono::milliseconds retry_after, bool unjournal,
                                             const invocation::FlowControl* flow) override {
    return inner_.release(id, field, token, retry_after, unjournal, flow);
  }
  Result<invocation::RenewVerdict> renew(std::string_view id, std::string_view field,
                                         std::string_view token, std::chrono::milliseconds extend,
                                         const invocation::FlowControl* flow) override {
    return inner_.renew(id, field, token, extend, flow);
  }
  Result<invocation::DlqVerdict> writeDlq(std::string_view id, std::string_view field,
                                          const invocation::DlqEntry& entry) override {
    return inner_.writeDlq(id, field, entry);
  }
  Result<invocation::AckVerdict> acknowledge(std::string_view id,
                                             bool obsolete_occurrence) override {
    return inner_.acknowledge(id, obsolete_occurrence);
  }
  Status clearMissing(std::string_view id) override { return inner_.clearMissing(id); }
  Result<invocation::CancelVerdict> cancel(std::string_view id,
                                           const invocation::CancelRequest& request) override {
    return inner_.cancel(id, request);
  }
  Status journal(std::string_view id, const invocation::AttemptRecord& record) override {
    return inner_.journal(id, record);
  }
  std::vector<Result<invocation::SettleVerdict>> settle(
      const std::vector<invocation::SettleRequest>& requests) override {
    return inner_.settle(requests);
  }

 private:
  invocation::LifecycleStore& inner_;
};

}  // namespace relay::testing
