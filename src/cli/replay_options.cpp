#include "cli/replay_options.h"

#include <cstdlib>
#include <limits>

#include "common/duration.h"
#include "common/whole_number.h"
#include "stream/stream_id.h"

namespace relay::cli {
namespace {

// A full id, or bare ms taken as its first (`--from`) or last (`--to`) id.
Result<stream::StreamId> windowEnd(const std::string& text, const char* flag, bool last) {
  const auto id = stream::StreamId::parse(text);
  if (!id) {
    return Error::invalid(std::string(flag) + " \"" + text +
                          "\": expected a stream id (<ms>-<seq>) or Unix milliseconds");
  }
  if (last && text.find('-') == std::string::npos) {
    return stream::StreamId{id->ms, std::numeric_limits<std::uint64_t>::max()};
  }
  return *id;
}

}  // namespace

Result<std::pair<std::string, std::string>> replayWindow(const ReplayWindowFlags& flags,
                                                         std::int64_t now_ms) {
  const bool range = !flags.from.empty() || !flags.to.empty();
  if (!flags.since.empty() && range) {
    return Error::invalid("--since and --from/--to are two ways of giving the window: use one");
  }
  if (!flags.since.empty()) {
    auto since = parseDuration(flags.since);
    if (!since.ok() || since->count() <= 0) {
      return Error::invalid("--since \"" + flags.since +
                            "\": expected a positive duration such as 90s, 30m, 1h or 7d");
    }
    const std::int64_t from = std::max<std::int64_t>(0, now_ms - since->count());
    return std::pair{stream::StreamId{static_cast<std::uint64_t>(from), 0}.toString(),
                     stream::StreamId{static_cast<std::uint64_t>(now_ms),
                                      std::numeric_limits<std::uint64_t>::max()}
                         .toString()};
  }
  if (flags.from.empty() || flags.to.empty()) {
    return Error::invalid("the window is --since DURATION, or --from ID with --to ID");
  }
  auto from = windowEnd(flags.from, "--from", false);
  if (!from.ok()) return from.error();
  auto to = windowEnd(flags.to, "--to", true);
  if (!to.ok()) return to.error();
  if (*to < *from) {
    return Error::invalid("--from " + from->toString() + " is after --to " + to->toString());
  }
  return std::pair{from->toString(), to->toString()};
}

Result<double> parseReplayRate(std::string_view text) {
  if (text.empty()) return 0.0;
  std::string_view number = text;
  if (number.size() > 2 && number.substr(number.size() - 2) == "/s") {
    number.remove_suffix(2);
  }
  long long value = 0;
  if (!parseWholeNumber(number, value) || value <= 0 || value > 1'000'000) {
    return Error::invalid("--rate \"" + std::string(text) +
                          "\": expected copies per second, N/s with N from 1 to 1000000");
  }
  return static_cast<double>(value);
}

}  // namespace relay::cli
