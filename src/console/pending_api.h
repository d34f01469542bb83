#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "console/console_state.h"
#include "invocation/attempt_journal.h"

namespace relay::console {

/// The invocations of one pending message, in the order of its plan (`relay:plan`, with each
/// one's attempt budget; a planned invocation that has not started shows as `planned`): each
/// `<app>/<handler>` field of its state hash decoded through invocation::Marker (running:
/// attempt and claim deadline; failed: attempt and next attempt at; succeeded; exhausted, with
/// or without its DLQ entry written), with the last failed attempt's exit reason and output tail
/// when the state keeps them, joined with the attempt journal (who runs it since when, every
/// attempt's outcome). Other reserved `relay:` fields are not invocations; an undecodable
/// marker shows as `unknown` with its text.
Json invocationsJson(const std::vector<std::pair<std::string, std::string>>& state,
                     const std::vector<invocation::AttemptRecord>& journal);

/// GET /api/pending?before=&limit=: the group's PEL, oldest first (id, consumer, idle time,
/// deliveries, the event's first bytes) with each message's invocations.
http::HttpReply pendingMessages(ConsoleState& state, const http::HttpRequest& request);

}  // namespace relay::console
