#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "common/result.h"

namespace relay::cli {

/// `relay replay`'s window flags as given: `--since` or `--from` with `--to`.
struct ReplayWindowFlags {
  std::string since;
  std::string from;
  std::string to;
};

/// The window's first and last stream ids, inclusive (docs/replay.md "Windows"): `--since D`
/// is [now - D, now] on Redis's clock (`now_ms`); `--from`/`--to` take full ids or bare
/// milliseconds (`--from 1700000000000` is its first id, `--to` its last). kInvalidArgument
/// naming the flag otherwise (both forms, neither, a bad duration or id, from after to).
Result<std::pair<std::string, std::string>> replayWindow(const ReplayWindowFlags& flags,
                                                         std::int64_t now_ms);

/// `--rate N/s` (or a bare N): copies per second, > 0; "" is 0 (as fast as possible).
Result<double> parseReplayRate(std::string_view text);

}  // namespace relay::cli
