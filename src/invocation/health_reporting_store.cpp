#include "invocation/health_reporting_store.h"

namespace relay::invocation {

template <typename R>
R HealthReportingStore::report(std::string_view op, R result) {
  if (result.ok()) {
    health_.succeeded(op);
  } else {
    health_.failed(op, result.error());
  }
  return result;
}

Result<StartVerdict> HealthReportingStore::start(std::string_view id, const StartRequest& request) {
  return report("try_start", store_->start(id, request));
}

Result<BeginVerdict> HealthReportingStore::begin(std::string_view id, std::string_view field,
                                                 std::string_view token) {
  return report("begin", store_->begin(id, field, token));
}

Status HealthReportingStore::heartbeat(const ClaimTimes& times) {
  return report("heartbeat", store_->heartbeat(times));
}

Result<CompleteVerdict> HealthReportingStore::complete(std::string_view id, std::string_view field,
                                                       std::string_view token,
                                                       const AttemptResult& result,
                                                       const DlqEntry* dlq,
                                                       const AttemptRecord* finished,
                                                       const FlowControl* flow) {
  return report("complete", store_->complete(id, field, token, result, dlq, finished, flow));
}

Result<ReleaseVerdict> HealthReportingStore::release(std::string_view id, std::string_view field,
                                                     std::string_view token,
                                                     std::chrono::milliseconds retry_after,
                                                     bool unjournal, const FlowControl* flow) {
  return report("release", store_->release(id, field, token, retry_after, unjournal, flow));
}

Result<RenewVerdict> HealthReportingStore::renew(std::string_view id, std::string_view field,
                                                 std::string_view token,
                                                 std::chrono::milliseconds extend,
                                                 const FlowControl* flow) {
  return report("renew", store_->renew(id, field, token, extend, flow));
}

Result<DlqVerdict> HealthReportingStore::writeDlq(std::string_view id, std::string_view field,
                                                  const DlqEntry& entry) {
  return report("dlq_write", store_->writeDlq(id, field, entry));
}

Result<AckVerdict> HealthReportingStore::acknowledge(std::string_view id,
                                                     bool obsolete_occurrence) {
  return report("xack", store_->acknowledge(id, obsolete_occurrence));
}

Status HealthReportingStore::clearMissing(std::string_view id) {
  return report("xack", store_->clearMissing(id));
}

Result<CancelVerdict> HealthReportingStore::cancel(std::string_view id,
                                                   const CancelRequest& request) {
  return report("cancel", store_->cancel(id, request));
}

Status HealthReportingStore::journal(std::string_view id, const AttemptRecord& record) {
  return store_->journal(id, record);
}

std::vector<Result<SettleVerdict>> HealthReportingStore::settle(
    const std::vector<SettleRequest>& requests) {
  std::vector<Result<SettleVerdict>> verdicts = store_->settle(requests);
  for (std::size_t i = 0; i < verdicts.size(); ++i) {
    const std::string_view op = requests[i].dlq ? "dlq_write" : "xack";
    if (verdicts[i].ok()) {
      health_.succeeded(op);
    } else {
      health_.failed(op, verdicts[i].error());
    }
  }
  return verdicts;
}

}  // namespace relay::invocation
