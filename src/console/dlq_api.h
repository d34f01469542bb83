#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "console/console_state.h"
#include "console/request_body.h"
#include "dlq/dlq_filter.h"
#include "dlq/entry.h"
#include "invocation/attempt_journal.h"

namespace relay::console {

/// A row of the Dead letters table: id, timestamp, app, handler, kind, reason, attempts, and
/// the first bytes of the event.
Json deadLetterSummary(const dlq::Entry& entry);
/// Everything about one entry: every field as recorded, the event pretty-printed when it is
/// JSON, whether it can be replayed (and why not), and the journal of its attempts.
Json deadLetterDetail(const dlq::Entry& entry,
                      const std::vector<invocation::AttemptRecord>& attempts);

/// GET /api/dlq?<filter>&upto=&before=&limit=: one page, the selection's total and bound.
http::HttpReply listDeadLetters(ConsoleState& state, const http::HttpRequest& request);
/// GET /api/dlq/entry?id=
http::HttpReply inspectDeadLetter(ConsoleState& state, const http::HttpRequest& request);
/// POST /api/dlq/delete: {"ids": [...]} or {"filter": {...}, "upto": id, "expected": N}.
http::HttpReply removeDeadLetters(ConsoleState& state, const http::HttpRequest& request);
/// POST /api/dlq/replay: the same selections; starts a replay job: {"job": N, "total": M}.
http::HttpReply replayDeadLetters(ConsoleState& state, const http::HttpRequest& request);
/// GET /api/jobs?id=N: a replay job's progress.
http::HttpReply replayStatus(ConsoleState& state, const http::HttpRequest& request);

}  // namespace relay::console
