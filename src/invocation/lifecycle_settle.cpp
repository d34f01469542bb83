// The messages that owe no invocation by their classification (unmatched, obsolete,
// unrunnable): one at a time through process(), or a whole read at once through settleRead()
// in one store round trip (docs/pipeline.md "Acknowledgements in batches").
#include <optional>
#include <utility>

#include "invocation/lifecycle.h"

namespace relay::invocation {
namespace {

bool unowed(Classification::Kind kind) {
  switch (kind) {
    case Classification::Kind::kUnmatched:
    case Classification::Kind::kObsolete:
    case Classification::Kind::kMalformed:
    case Classification::Kind::kOversized:
    case Classification::Kind::kBadSchedule:
      return true;
    case Classification::Kind::kPlan:
    case Classification::Kind::kHold:
      break;
  }
  return false;
}

std::string_view unrunnableLabel(Classification::Kind kind) {
  return kind == Classification::Kind::kOversized ? "oversized" : "malformed";
}

// The entry's `kind`, also relay_dlq_entries_total{reason}.
DlqKind dlqKind(Classification::Kind kind) {
  switch (kind) {
    case Classification::Kind::kOversized:
      return DlqKind::kOversized;
    case Classification::Kind::kBadSchedule:
      return DlqKind::kSchedule;
    default:
      return DlqKind::kMalformed;
  }
}

}  // namespace

SettleRequest Lifecycle::settleRequest(const Message& message, const Classification& what) const {
  SettleRequest request;
  request.id = message.id;
  switch (what.kind) {
    case Classification::Kind::kUnmatched:
      break;
    case Classification::Kind::kObsolete:
      request.obsolete_occurrence = true;
      break;
    default: {
      DlqEntry entry =
          dlqEntry(message, dlqKind(what.kind), what.app, what.handler, what.reason, 0);
      entry.event = what.dlq_event;
      request.dlq = std::move(entry);
    }
  }
  return request;
}

Delivery Lifecycle::settleUnowed(LifecycleStore& store, const Message& message,
                                 const Classification& what, const std::atomic<bool>& stopping) {
  std::vector<Result<SettleVerdict>> verdicts = store.settle({settleRequest(message, what)});
  std::optional<Plan> owed;
  const Delivery delivery =
      afterSettle(message, what, std::move(verdicts.front()), owed, /*redelivered=*/true);
  // Classified before (by this or another worker, maybe with other rules): the recorded plan
  // is what the message owes.
  return owed ? runPlan(store, message, std::move(*owed), stopping,
                        what.replay ? &*what.replay : nullptr)
              : delivery;
}

std::vector<ClassifiedMessage> Lifecycle::settleRead(LifecycleStore& store,
                                                     std::vector<Message> messages) {
  std::vector<ClassifiedMessage> rest;
  std::vector<Message> settling;
  std::vector<Classification> classifications;
  std::vector<SettleRequest> requests;
  for (Message& message : messages) {
    Classification what = catalog_.classify(message, clock_.now());
    if (!unowed(what.kind)) {
      rest.push_back({std::move(message), std::move(what)});  // process() takes it as it is
      continue;
    }
    observer_.onMessage(message);
    observer_.onClassified(message, what);
    requests.push_back(settleRequest(message, what));
    settling.push_back(std::move(message));
    classifications.push_back(std::move(what));
  }
  if (requests.empty()) return rest;
  std::vector<Result<SettleVerdict>> verdicts = store.settle(requests);
  for (std::size_t i = 0; i < settling.size(); ++i) {
    std::optional<Plan> owed;
    (void)afterSettle(settling[i], classifications[i], std::move(verdicts[i]), owed,
                      /*redelivered=*/false);
    // A recorded plan: it runs on the pool like any other owed invocation, as recorded.
    if (owed) {
      Classification recorded;
      recorded.kind = Classification::Kind::kPlan;
      recorded.plan = std::move(*owed);
      recorded.replay = classifications[i].replay;
      rest.push_back({std::move(settling[i]), std::move(recorded)});
    }
  }
  return rest;
}

Delivery Lifecycle::afterSettle(const Message& message, const Classification& what,
                                Result<SettleVerdict> verdict, std::optional<Plan>& owed,
                                bool redelivered) {
  if (what.kind == Classification::Kind::kUnmatched ||
      what.kind == Classification::Kind::kObsolete) {
    if (!verdict.ok()) {
      metrics_.countRedisError("xack");
      logger_.warn("acknowledge failed: message left pending",
                   {{"message_id", message.id}, {"error", verdict.error().message}});
      return Delivery::kPending;
    }
    switch (verdict->ack.kind) {
      case AckVerdict::Kind::kUnresolved:
        logger_.info("message owes its recorded plan: not classified again",
                     {{"message_id", message.id}});
        owed = std::move(verdict->ack.plan);
        return Delivery::kPending;
      case AckVerdict::Kind::kRetained:
        return Delivery::kStale;
      case AckVerdict::Kind::kAcked:
        break;
    }
    const bool unmatched = what.kind == Classification::Kind::kUnmatched;
    metrics_.countEvent(unmatched ? "unmatched" : "obsolete_schedule");
    if (unmatched && redelivered) {
      // Delivered before (another worker held it, or left it pending): this worker's rules
      // decide now, and the ACK is final (docs/pipeline.md "Waiting"). Worth a line.
      logger_.info("redelivered message unmatched by these rules: acknowledged",
                   {{"message_id", message.id}});
    } else if (unmatched) {
      logger_.debug("unmatched event acknowledged", {{"message_id", message.id}});
    } else {
      logger_.info("obsolete schedule occurrence acknowledged",
                   {{"message_id", message.id}, {"app", what.app}, {"reason", what.reason}});
    }
    return Delivery::kAcked;
  }
  if (!verdict.ok() || !verdict->dlq || verdict->dlq->kind == DlqVerdict::Kind::kStale) {
    metrics_.countRedisError("dlq_write");
    logger_.error("dead-letter write failed: message left pending",
                  {{"message_id", message.id},
                   {"error", verdict.ok() ? "state changed" : verdict.error().message}});
    return Delivery::kPending;
  }
  DlqVerdict& written = *verdict->dlq;
  for (int i = 0; i < written.stats_failures; ++i) metrics_.countRedisError("stats");
  switch (written.kind) {
    case DlqVerdict::Kind::kPlanned:
      owed = std::move(written.plan);
      return Delivery::kPending;
    case DlqVerdict::Kind::kRetained:
      return Delivery::kStale;
    case DlqVerdict::Kind::kWritten:
      metrics_.countEvent(unrunnableLabel(what.kind));
      metrics_.countDlqEntry(kindName(dlqKind(what.kind)));
      break;
    default:
      break;
  }
  logger_.warn(what.kind == Classification::Kind::kBadSchedule
                   ? "malformed schedule occurrence dead-lettered"
               : what.kind == Classification::Kind::kOversized ? "oversized message dead-lettered"
                                                               : "malformed message dead-lettered",
               {{"message_id", message.id},
                {"app", what.app},
                {"handler", what.handler},
                {"reason", what.reason}});
  return written.acked ? Delivery::kAcked : Delivery::kPending;
}

Delivery Lifecycle::deadLetterPoison(LifecycleStore& store, const std::string& id, long long deaths,
                                     long long event_bytes, std::string event_head) {
  Message message;
  message.id = id;
  DlqEntry entry = dlqEntry(message, DlqKind::kPoison, "-", "-",
                            "poison: its worker died " + std::to_string(deaths) +
                                " times while holding it, before it reached a handler (event of " +
                                std::to_string(event_bytes) + " bytes; its first " +
                                std::to_string(event_head.size()) + " kept)",
                            0);
  entry.event = std::move(event_head);
  auto written = store.writeDlq(id, kMalformedField, entry);
  if (!written.ok()) {
    metrics_.countRedisError("dlq_write");
    logger_.error("poison message: dead-letter write failed, left pending",
                  {{"message_id", id}, {"error", written.error().message}});
    return Delivery::kPending;
  }
  for (int i = 0; i < written->stats_failures; ++i) metrics_.countRedisError("stats");
  if (written->kind == DlqVerdict::Kind::kWritten) {
    metrics_.countEvent(kindName(DlqKind::kPoison));
    metrics_.countDlqEntry(kindName(DlqKind::kPoison));
    logger_.error("poison message dead-lettered: its workers died holding it",
                  {{"message_id", id}, {"deaths", std::to_string(deaths)}});
  }
  if (written->kind == DlqVerdict::Kind::kPlanned) return Delivery::kPending;
  return written->acked ? Delivery::kAcked : Delivery::kPending;
}

}  // namespace relay::invocation
