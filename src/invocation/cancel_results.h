#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "invocation/lifecycle_store.h"

namespace relay::invocation {

/// One line of what a cancellation did (docs/cli.md "`relay cancel`"), as `relay cancel` prints
/// it and the console's POST /api/cancel returns it.
struct CancelResult {
  std::string message_id;
  std::string invocation;  // `<app>/<handler>`, or the target asked for (`*`, `<app>/*`)
  /// cancelled (before it started), stopping (its worker stops it), orphaned (its worker is
  /// gone: the takeover cancels it), finished (nothing to cancel), requested (not read yet:
  /// cancelled when a worker reads it), not_found, error
  std::string result;
  bool acknowledged = false;  // the message was acknowledged by this cancellation
  std::string error;          // result `error`: what failed
};

/// The results of LifecycleStore::cancel(`id`, a request for `target`): one per invocation the
/// verdict names, or one for the whole message (not found, finished, requested, an error, or a
/// target the plan does not have).
std::vector<CancelResult> cancelResults(std::string_view id, std::string_view target,
                                        const Result<CancelVerdict>& verdict);

/// Whether a result means the target was not cancelled for want of it (not_found, error).
bool cancelFailed(const CancelResult& result);

}  // namespace relay::invocation
