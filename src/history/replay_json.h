#pragma once

#include <nlohmann/json.hpp>

#include "history/replay_record.h"

namespace relay::history {

/// One replay as `relay replay show --json` prints it, each `--json` progress line and the
/// console's /api/replays list it (docs/replay.md "State in Redis"): id, state, source, app,
/// rule, from, to, rate, again, progress (0..1), cursor, scanned, published, skipped,
/// duplicates, driver, created, finished, error, missing ({from, to, reason} or null); a
/// `dlq` replay also dlq_filter and expected.
nlohmann::ordered_json replayJson(const ReplayStatus& replay);

}  // namespace relay::history
