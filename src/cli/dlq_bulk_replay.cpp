#include "cli/dlq_bulk_replay.h"

#include <random>

#include "cli/redis_session.h"
#include "cli/replay_options.h"
#include "cli/replay_view.h"
#include "common/duration.h"
#include "common/printable.h"
#include "common/system_clock.h"
#include "console/request_body.h"
#include "dlq/dead_letter_queue.h"
#include "history/replay_record.h"
#include "stream/stream_entry.h"

namespace relay::cli {
namespace {

constexpr const char* kBulkName = "relay dlq replay";

// A duration (1h) is that long before `now_ms`, in Unix ms; anything else (RFC 3339, Unix ms)
// is the console's to read.
std::string timeBound(const std::string& value, std::int64_t now_ms) {
  auto duration = parseDuration(value);
  if (!duration.ok() || duration->count() <= 0) return value;
  return std::to_string(std::max<std::int64_t>(0, now_ms - duration->count()));
}

}  // namespace

void runDlqBulkReplay(const DlqBulkFlags& flags, std::istream& answers, CommandContext& context) {
  const auto usage = [&context](const std::string& message) {
    context.err << kBulkName << ": " << message << "\n";
    context.exit_code = kExitUsage;
  };
  auto rate = parseReplayRate(flags.rate);
  if (!rate.ok()) return usage(rate.error().message);
  auto session = openRedisSession("dlq replay", {}, context);
  if (!session) return;
  auto now = history::redisNowMs(*session->redis);
  if (!now.ok()) return reportRedisError("dlq replay", now.error(), context);
  const std::string since = timeBound(flags.since, *now);
  const std::string until = timeBound(flags.until, *now);
  auto filter = console::parseDlqFilter([&](std::string_view name) -> std::optional<std::string> {
    const std::string* value = name == "app"       ? &flags.app
                               : name == "handler" ? &flags.handler
                               : name == "kind"    ? &flags.kind
                               : name == "reason"  ? &flags.reason
                               : name == "q"       ? &flags.text
                               : name == "since"   ? &since
                               : name == "until"   ? &until
                                                   : nullptr;
    if (!value || value->empty()) return std::nullopt;
    return *value;
  });
  if (!filter.ok()) return usage(filter.error().message);
  dlq::DeadLetterQueue queue(*session->redis, session->keys.dlq(), 500,
                             stream::entryReplyLimits(session->config.max_event_bytes));
  auto selection = queue.select(*filter, "");
  if (!selection.ok()) return reportRedisError("dlq replay", selection.error(), context);
  const std::size_t count = selection->ids.size();
  if (count == 0) {
    context.err << kBulkName << ": the filter selects no entry of " << session->keys.dlq()
                << "; nothing to replay\n";
    context.exit_code = kExitFailed;
    return;
  }
  context.err << "the filter selects " << count << " dead-letter entr" << (count == 1 ? "y" : "ies")
              << " of " << session->keys.dlq() << " (up to " << selection->upto << ")\n";
  if (!flags.yes) {
    context.err << "replay them through their recorded handlers? [y/N] ";
    context.err.flush();
    std::string answer;
    std::getline(answers, answer);
    if (answer != "y" && answer != "Y" && answer != "yes") {
      context.err << kBulkName << ": not confirmed: nothing was replayed (--yes confirms)\n";
      context.exit_code = kExitFailed;
      return;
    }
  }
  history::ReplaySpec spec;
  spec.source = history::ReplaySpec::Source::kDeadLetters;
  spec.app = filter->app;
  spec.handler = filter->handler;
  spec.dlq_filter = filter->toJson();
  spec.upto = selection->upto;
  spec.expected = static_cast<long long>(count);
  spec.rate = *rate;
  std::random_device random;
  const std::string id = history::newReplayId(*now, random());
  auto created = history::createReplay(*session->redis, session->keys, spec, id);
  if (!created.ok()) return reportRedisError("dlq replay", created.error(), context);
  if (!flags.json) context.err << "replay " << id << " created\n";
  if (flags.detach) {
    context.out << id << "\n";
    return;
  }
  SystemClock clock;
  followReplay(*session, id, flags.json, clock, context);
}

}  // namespace relay::cli
