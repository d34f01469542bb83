#include "cli/replay_view.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>

#include "cli/signal_stopper.h"
#include "common/printable.h"
#include "common/rfc3339.h"
#include "history/replay_json.h"

namespace relay::cli {
namespace {

using Json = nlohmann::ordered_json;

constexpr auto kPoll = std::chrono::milliseconds(200);

std::string window(const history::ReplayStatus& replay) {
  if (replay.spec.source == history::ReplaySpec::Source::kDeadLetters) {
    return "dlq " + replay.spec.dlq_filter;
  }
  return replay.spec.from + ".." + replay.spec.to;
}

std::string source(const history::ReplayStatus& replay) {
  if (replay.spec.source == history::ReplaySpec::Source::kDeadLetters) return "dlq";
  return printable(replay.spec.app) +
         (replay.spec.handler.empty() ? "" : "/" + printable(replay.spec.handler));
}

std::string percent(const history::ReplayStatus& replay) {
  return std::to_string(static_cast<int>(std::floor(replay.progress() * 100))) + "%";
}

std::string timeOf(std::int64_t ms) {
  return ms > 0 ? formatRfc3339(WallTime(std::chrono::milliseconds(ms))) : std::string("-");
}

}  // namespace

std::vector<std::string> replayRow(const history::ReplayStatus& replay) {
  return {replay.id,
          replay.state,
          source(replay),
          printable(window(replay)),
          percent(replay),
          std::to_string(replay.published),
          std::to_string(replay.skipped),
          printable(replay.driver.empty() ? "-" : replay.driver)};
}

void printReplay(const history::ReplayStatus& replay, std::ostream& out) {
  const auto line = [&out](const std::string& name, const std::string& value) {
    out << name << ":" << std::string(name.size() < 12 ? 12 - name.size() : 1, ' ')
        << printable(value) << "\n";
  };
  line("id", replay.id);
  line("state", replay.state + (replay.error.empty() ? "" : ": " + replay.error));
  line("source", source(replay));
  line("window", window(replay));
  if (!replay.spec.filter.empty()) line("filter", replay.spec.filter);
  if (replay.spec.rate > 0)
    line("rate", std::to_string(static_cast<long long>(replay.spec.rate)) + "/s");
  line("progress",
       percent(replay) + " (cursor " + (replay.cursor.empty() ? "-" : replay.cursor) + ")");
  line("scanned", std::to_string(replay.scanned));
  line("published", std::to_string(replay.published));
  line("skipped", std::to_string(replay.skipped));
  if (replay.duplicates > 0) line("duplicates", std::to_string(replay.duplicates));
  line("driver", replay.driver.empty() ? "-" : replay.driver);
  line("created", timeOf(replay.created_ms));
  if (replay.finished_ms > 0) line("finished", timeOf(replay.finished_ms));
  if (!replay.missing_reason.empty()) {
    printMissing(replay.missing_from, replay.missing_to, replay.missing_reason, out);
  }
}

void printMissing(const std::string& from, const std::string& to, const std::string& reason,
                  std::ostream& out) {
  out << "missing: entries " << from << ".." << to << " are no longer held: " << printable(reason)
      << "\n";
}

std::string progressBar(const history::ReplayStatus& replay, int width) {
  const int filled = static_cast<int>(std::floor(replay.progress() * width));
  std::string bar = "[" + std::string(filled, '#') + std::string(width - filled, '.') + "] ";
  std::string shown = percent(replay);
  bar += std::string(shown.size() < 4 ? 4 - shown.size() : 0, ' ') + shown + "  " +
         std::to_string(replay.published) + " published, " + std::to_string(replay.scanned) +
         " scanned";
  return bar;
}

void followReplay(RedisSession& session, const std::string& id, bool json, Clock& clock,
                  CommandContext& context) {
  std::atomic<bool> interrupted{false};
  SignalStopper stopper([&interrupted](int) { interrupted = true; });
  const bool bar = !json && ::isatty(STDOUT_FILENO) == 1;
  std::string last;
  while (true) {
    auto replay = history::readReplay(*session.redis, session.keys, id);
    if (!replay.ok()) return reportRedisError("replay", replay.error(), context);
    if (!*replay) {
      context.err << "relay replay: no replay " << printable(id) << " in group "
                  << session.keys.group << "\n";
      context.exit_code = kExitFailed;
      return;
    }
    const history::ReplayStatus& status = **replay;
    if (bar) {
      context.out << "\r" << progressBar(status, 30) << std::flush;
    } else {
      std::string line = replayJson(status).dump();
      if (line != last) context.out << line << "\n" << std::flush;
      last = std::move(line);
    }
    if (status.finished()) {
      if (bar) context.out << "\n";
      if (!json) {
        context.out << "replay " << id << " " << status.state << ": " << status.published
                    << " copies published, " << status.skipped << " entries skipped"
                    << (status.error.empty() ? "" : " (" + printable(status.error) + ")") << "\n";
        if (!status.missing_reason.empty()) {
          printMissing(status.missing_from, status.missing_to, status.missing_reason, context.err);
        }
      }
      context.exit_code = status.state == "done" ? kExitOk : kExitFailed;
      return;
    }
    if (interrupted) {
      if (bar) context.out << "\n";
      context.err << "stopped following: replay " << id
                  << " keeps running on the workers; follow it with `relay replay show " << id
                  << " --follow`, stop it with `relay replay cancel " << id << "`\n";
      return;
    }
    clock.sleepFor(kPoll);
  }
}

}  // namespace relay::cli
