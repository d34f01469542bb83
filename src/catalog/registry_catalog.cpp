#include "catalog/registry_catalog.h"

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

#include "catalog/flow_gates.h"
#include "catalog/invocation_spec.h"
#include "catalog/message_decoder.h"
#include "catalog/replay_copy.h"
#include "catalog/schedule_admission.h"
#include "common/rfc3339.h"
#include "common/whole_number.h"
#include "schedule/occurrence.h"

namespace relay::catalog {
namespace {

using invocation::Classification;

// An app whose rules are unknown (never loaded here): nothing can be classified without them.
const app::AppEntry* rulelessApp(const app::Snapshot& snapshot) {
  for (const app::AppEntry& entry : snapshot.apps()) {
    if (!entry.app) return &entry;
  }
  return nullptr;
}

// What a matching rule owes (docs/pipeline.md "One message", step 3).
invocation::PlannedInvocation plannedOf(const app::AppEntry& entry, const app::Rule& rule,
                                        runtime::Trigger trigger, const event::Event& event) {
  invocation::PlannedInvocation planned;
  planned.app = entry.name;
  planned.handler = rule.handler;
  planned.max_attempts = rule.retries + 1;
  planned.timeout = rule.timeout;
  planned.deadline = rule.deadline;
  planned.start_timeout = rule.start_timeout;
  planned.trigger = trigger;
  planned.flow = flowControl(*entry.app, rule, event);
  return planned;
}

// A message whose event does not decode: malformed or oversized, with what its DLQ entry
// records. False (nothing set) for an event.
bool undecodable(const DecodedMessage& decoded, Classification& what) {
  if (decoded.kind == DecodedMessage::Kind::kEvent) return false;
  what.kind = decoded.kind == DecodedMessage::Kind::kOversized ? Classification::Kind::kOversized
                                                               : Classification::Kind::kMalformed;
  what.reason = decoded.reason;
  what.dlq_event = decoded.dlq_event;
  return true;
}

std::string holdReason(const app::AppEntry& entry) {
  return "app " + entry.name + " has no valid template yet (" +
         (entry.errors.empty() ? std::string("not loaded") : entry.errors.front().toString()) + ")";
}

// When Redis added the entry: the milliseconds of its id `<ms>-<seq>`.
std::optional<WallTime> publishedAt(std::string_view id) {
  std::int64_t ms = 0;
  if (!parseWholeNumber(id.substr(0, id.find('-')), ms)) return std::nullopt;
  return WallTime(std::chrono::milliseconds(ms));
}

}  // namespace

RegistryCatalog::RegistryCatalog(const app::Registry& registry, std::size_t max_event_bytes,
                                 OccurrenceChecks checks, std::string group)
    : registry_(registry),
      max_event_bytes_(max_event_bytes),
      checks_(checks),
      group_(std::move(group)) {}

std::shared_ptr<const Classifier> RegistryCatalog::classifier() {
  std::shared_ptr<const app::Snapshot> snapshot = registry_.snapshot();
  std::lock_guard lock(mutex_);
  if (!classifier_ || &classifier_->snapshot() != snapshot.get()) {
    classifier_ = std::make_shared<const Classifier>(std::move(snapshot));
  }
  return classifier_;
}

Classification RegistryCatalog::classify(const invocation::Message& message, WallTime now) {
  // Relay's own occurrences are not external events: no classification, no matching.
  if (message.find(schedule::kEnvelopeField)) return classifySchedule(message, now);
  if (const std::string* envelope = message.find(kReplayField)) {
    return classifyReplay(message, *envelope);
  }
  Classification what;
  const DecodedMessage decoded = decodeMessage(message, max_event_bytes_);
  if (undecodable(decoded, what)) return what;
  const std::shared_ptr<const Classifier> rules = classifier();
  if (const app::AppEntry* ruleless = rulelessApp(rules->snapshot())) {
    what.kind = Classification::Kind::kHold;
    what.reason = holdReason(*ruleless);
    return what;
  }
  const std::vector<Match> matches = rules->classify(*decoded.event, Instant::fromWallTime(now));
  if (matches.empty()) {
    what.kind = Classification::Kind::kUnmatched;
    return what;
  }
  what.kind = Classification::Kind::kPlan;
  for (const Match& match : matches) {
    what.plan.invocations.push_back(
        plannedOf(*match.entry, *match.rule, runtime::Trigger::kEvent, *decoded.event));
  }
  return what;
}

Classification RegistryCatalog::classifyReplay(const invocation::Message& message,
                                               std::string_view envelope) {
  Classification what;
  auto copy = parseReplayEnvelope(envelope);
  if (!copy.ok()) {
    // Relay's own field, unreadable: it can never run as an ordinary event either.
    what.kind = Classification::Kind::kMalformed;
    what.reason = "malformed replay copy: " + copy.error().message;
    const std::string* event = message.find("event");
    what.dlq_event = event ? *event : std::string();
    return what;
  }
  if (!group_.empty() && copy->group != group_) {
    what.kind = Classification::Kind::kUnmatched;  // another deployment's replay
    return what;
  }
  // Only a copy a replay driver published runs (its copies hash names this very entry): a
  // producer that writes the field itself gets no handler run it could not get otherwise.
  Result<bool> proven =
      checks_.published ? checks_.published->copiedAs(*copy, message.id) : Result<bool>(false);
  if (!proven.ok()) {
    what.kind = Classification::Kind::kHold;
    what.reason =
        "cannot tell whether a replay published this copy (" + proven.error().message + ")";
    return what;
  }
  if (!*proven) {
    what.kind = Classification::Kind::kMalformed;
    what.reason = "relay_replay: replay " + copy->replay + " published no copy " + message.id +
                  " (a producer may not write Relay's replay field)";
    const std::string* event = message.find("event");
    what.dlq_event = event ? *event : std::string();
    return what;
  }
  what.replay = invocation::ReplayOrigin{copy->replay, copy->original_id, copy->dlq_id};
  what.app = copy->app;
  const DecodedMessage decoded = decodeMessage(message, max_event_bytes_);
  if (undecodable(decoded, what)) return what;
  const std::shared_ptr<const Classifier> rules = classifier();
  const app::AppEntry* entry = rules->snapshot().find(copy->app);
  if (entry && !entry->app) {
    what.kind = Classification::Kind::kHold;
    what.reason = holdReason(*entry);
    return what;
  }
  if (copy->mode == ReplayCopy::Mode::kDeadLetter) {
    // The recorded handler, as `relay dlq replay` runs it: with its current budget when this
    // worker knows it; otherwise the defaults, and a worker that knows it runs it.
    invocation::PlannedInvocation planned;
    planned.app = copy->app;
    planned.handler = copy->handler;
    planned.max_attempts = app::kDefaultRetries + 1;
    planned.timeout = app::kDefaultTimeout;
    if (entry) {
      if (const app::Rule* rule = entry->app->findRule(copy->handler)) {
        planned = plannedOf(*entry, *rule, runtime::Trigger::kReplay, *decoded.event);
      }
      for (const app::Schedule& schedule : entry->app->schedules) {
        if (schedule.handler != copy->handler) continue;
        planned.max_attempts = schedule.retries + 1;
        planned.timeout = schedule.timeout;
        planned.deadline = schedule.deadline;
        planned.start_timeout = schedule.start_timeout;
      }
    }
    planned.trigger = runtime::Trigger::kReplay;
    what.kind = Classification::Kind::kPlan;
    what.plan.invocations.push_back(std::move(planned));
    return what;
  }
  if (!entry) {
    what.kind = Classification::Kind::kUnmatched;  // the app is gone: nothing to replay into
    what.reason = "app \"" + copy->app + "\" is not loaded";
    return what;
  }
  // Judged as it would have been when the original was published (now() windows included).
  const long long ms = copy->originalMs();
  const Instant then{ms / 1000, static_cast<std::int32_t>(ms % 1000) * 1'000'000};
  for (const Match& match : rules->classify(*decoded.event, then)) {
    if (match.entry != entry) continue;
    if (!copy->handler.empty() && match.rule->handler != copy->handler) continue;
    what.plan.invocations.push_back(
        plannedOf(*entry, *match.rule, runtime::Trigger::kReplay, *decoded.event));
  }
  what.kind = what.plan.invocations.empty() ? Classification::Kind::kUnmatched
                                            : Classification::Kind::kPlan;
  return what;
}

Classification RegistryCatalog::classifySchedule(const invocation::Message& message, WallTime now) {
  const std::shared_ptr<const app::Snapshot> snapshot = registry_.snapshot();
  const ScheduleAdmission admission = admitSchedule(*snapshot, message, max_event_bytes_);
  Classification what;
  what.reason = admission.reason;
  if (admission.app) what.app = admission.app->name;
  if (admission.schedule) what.handler = admission.schedule->handler;
  switch (admission.verdict) {
    case ScheduleAdmission::Verdict::kObsolete: {
      // Obsolete only when the app's rules are known: a broken app's schedules are unknown.
      const app::AppEntry* entry =
          admission.occurrence ? snapshot->find(admission.occurrence->app) : nullptr;
      if (entry && !entry->app) {
        what.kind = Classification::Kind::kHold;
        what.reason = holdReason(*entry);
        return what;
      }
      // A worker on another version of the template may know it (a rolling deploy): it is left
      // to one of those for a while, as an event whose handler this worker does not know.
      const std::optional<WallTime> published = publishedAt(message.id);
      if (published && now < *published + checks_.unknown_hold) {
        what.kind = Classification::Kind::kHold;
        what.reason = "schedule " + admission.occurrence->app + "/" +
                      admission.occurrence->schedule + " is not known on this worker (" +
                      admission.reason + "): left pending for a worker that knows it until " +
                      formatRfc3339(*published + checks_.unknown_hold);
        return what;
      }
      what.kind = Classification::Kind::kObsolete;
      if (admission.occurrence) what.app = admission.occurrence->app;
      return what;
    }
    case ScheduleAdmission::Verdict::kNotAFiring: {
      // A firing of the cron the publishing worker had (an edit, or a replica on another
      // version) when its dedupe key proves Relay published it as this very entry.
      Result<bool> proven = checks_.published
                                ? checks_.published->publishedAs(*admission.occurrence, message.id)
                                : Result<bool>(false);
      if (!proven.ok()) {
        what.kind = Classification::Kind::kHold;
        what.reason = "cannot tell whether Relay published this occurrence of another cron (" +
                      proven.error().message + ")";
        return what;
      }
      if (*proven) break;
      what.kind = Classification::Kind::kBadSchedule;
      what.dlq_event = admission.dlq_event;
      return what;
    }
    case ScheduleAdmission::Verdict::kMalformed:
      what.kind = Classification::Kind::kBadSchedule;
      what.dlq_event = admission.dlq_event;
      return what;
    case ScheduleAdmission::Verdict::kRun:
      break;
  }
  what.kind = Classification::Kind::kPlan;
  invocation::PlannedInvocation planned;
  planned.app = admission.app->name;
  planned.handler = admission.schedule->handler;  // the CURRENT handler, resolved by name
  planned.max_attempts = admission.schedule->retries + 1;
  planned.timeout = admission.schedule->timeout;
  planned.deadline = admission.schedule->deadline;
  planned.start_timeout = admission.schedule->start_timeout;
  planned.trigger = runtime::Trigger::kSchedule;
  planned.flow = scheduleFlowControl(*admission.app->app);
  what.plan.invocations.push_back(std::move(planned));
  return what;
}

invocation::Runnable RegistryCatalog::resolve(const invocation::PlannedInvocation& planned) {
  std::shared_ptr<const app::Snapshot> snapshot = registry_.snapshot();
  invocation::Runnable runnable;
  const app::AppEntry* entry = snapshot->find(planned.app);
  if (!entry || !entry->app) {
    runnable.reason = "app " + planned.app + " is not loaded on this worker";
    return runnable;
  }
  bool has_handler = entry->app->findRule(planned.handler) != nullptr;
  for (const app::Schedule& schedule : entry->app->schedules) {
    has_handler = has_handler || schedule.handler == planned.handler;
  }
  if (!has_handler) {
    runnable.reason = "handler " + planned.handler + " is not in the app's template on this worker";
    return runnable;
  }
  runnable.known = true;
  runnable.available = entry->status.available;
  runnable.reason = entry->status.reason;
  runnable.spec =
      invocationSpec(*entry->app, planned.handler, planned.timeout, "", 0, planned.trigger, "");
  runnable.concurrency = entry->app->concurrency;
  runnable.keep_alive = std::move(snapshot);
  return runnable;
}

}  // namespace relay::catalog
