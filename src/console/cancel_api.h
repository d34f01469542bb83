#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "console/console_state.h"
#include "invocation/lifecycle_store.h"

namespace relay::console {

/// What POST /api/cancel names (docs/console.md "JSON API"): invocations to cancel, each a
/// message id and `*` (every invocation of it) or `<app>/<handler>`, and whether each gets a
/// DLQ entry (reason `cancelled`).
struct CancelSelection {
  struct Target {
    std::string id;
    std::string what;
  };
  std::vector<Target> targets;
  bool dead_letter = false;
};

/// At most this many invocations per request (the page sends one message's).
inline constexpr std::size_t kMaxCancelTargets = 500;

/// Parses {"invocations": [{"id": "<ms>-<seq>", "invocation": "*"|"<app>/<handler>"}, ...],
/// "dead_letter": bool}; any other key or type is refused, naming it. Pure.
Result<CancelSelection> parseCancelSelection(std::string_view body);

/// POST /api/cancel: the store's cancel verb per invocation (docs/pipeline.md "Cancellation"),
/// replying {"results": [{message_id, invocation, result, acknowledged}]} as `relay cancel
/// --json` prints them.
http::HttpReply cancelInvocations(ConsoleState& state, const http::HttpRequest& request);

}  // namespace relay::console
