#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/redis_session.h"
#include "common/clock.h"
#include "history/replay_json.h"
#include "history/replay_record.h"

namespace relay::cli {

/// Its `relay replay ls` row: ID, STATE, SOURCE, WINDOW, PROGRESS, PUBLISHED, SKIPPED, DRIVER.
std::vector<std::string> replayRow(const history::ReplayStatus& replay);
/// `relay replay show`: one `name: value` line each.
void printReplay(const history::ReplayStatus& replay, std::ostream& out);
/// A part of the window no longer held, and the retention that removed it (docs/replay.md
/// "Missing entries").
void printMissing(const std::string& from, const std::string& to, const std::string& reason,
                  std::ostream& out);
/// A terminal's progress bar: `[#####.....]  45%  1200 published, 3000 scanned`.
std::string progressBar(const history::ReplayStatus& replay, int width);

/// Follows replay `id` until it ends (a bar on a terminal, JSON lines with `json` or off a
/// terminal), then prints its summary; exit code 0 when it is done, 1 when it failed or was
/// cancelled. The first SIGINT or SIGTERM stops following only: the replay keeps running on
/// the workers, and how to follow or cancel it is printed (docs/replay.md "Following"). Looks
/// at the replay every 200 ms of `clock`.
void followReplay(RedisSession& session, const std::string& id, bool json, Clock& clock,
                  CommandContext& context);

}  // namespace relay::cli
