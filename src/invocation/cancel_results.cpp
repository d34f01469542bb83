#include "invocation/cancel_results.h"

namespace relay::invocation {
namespace {

const char* whatName(CancelledInvocation::What what) {
  switch (what) {
    case CancelledInvocation::What::kCancelled:
      return "cancelled";
    case CancelledInvocation::What::kRunning:
      return "stopping";
    case CancelledInvocation::What::kOrphaned:
      return "orphaned";
    case CancelledInvocation::What::kFinished:
      break;
  }
  return "finished";
}

}  // namespace

std::vector<CancelResult> cancelResults(std::string_view id, std::string_view target,
                                        const Result<CancelVerdict>& verdict) {
  CancelResult whole{std::string(id), std::string(target), "", false, ""};
  if (!verdict.ok()) {
    whole.result = "error";
    whole.error = verdict.error().message;
    return {whole};
  }
  switch (verdict->kind) {
    case CancelVerdict::Kind::kMissing:
      whole.result = "not_found";
      return {whole};
    case CancelVerdict::Kind::kFinished:
      whole.result = "finished";
      return {whole};
    case CancelVerdict::Kind::kRequested:
      whole.result = "requested";
      return {whole};
    case CancelVerdict::Kind::kApplied:
      break;
  }
  if (verdict->invocations.empty()) {
    whole.result = "not_found";  // the plan has no such invocation
    return {whole};
  }
  std::vector<CancelResult> results;
  for (const CancelledInvocation& invocation : verdict->invocations) {
    results.push_back(
        {std::string(id), invocation.field, whatName(invocation.what), verdict->acked, ""});
  }
  return results;
}

bool cancelFailed(const CancelResult& result) {
  return result.result == "not_found" || result.result == "error";
}

}  // namespace relay::invocation
