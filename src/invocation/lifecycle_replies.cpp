// The decoding of every lifecycle script reply, in one place next to the Lua
// (lifecycle_scripts.cpp).
#include "invocation/lifecycle_replies.h"

#include <utility>

namespace relay::invocation {
namespace {

Error protocol(std::string message) {
  return Error::internal("lifecycle script: " + std::move(message));
}

Result<std::string_view> text(const redis::ReplyView& reply) {
  auto value = reply.string();
  if (!value.ok()) return protocol(value.error().message);
  return *value;
}

Result<std::string_view> textAt(const redis::ReplyView& reply, std::size_t index) {
  auto element = reply.at(index);
  if (!element.ok()) return protocol(element.error().message);
  return text(*element);
}

Result<long long> integerAt(const redis::ReplyView& reply, std::size_t index) {
  auto element = reply.at(index);
  if (!element.ok()) return protocol(element.error().message);
  auto value = element->integer();
  if (!value.ok()) return protocol(value.error().message);
  return *value;
}

Result<Plan> planAt(const redis::ReplyView& reply, std::size_t index) {
  auto value = textAt(reply, index);
  if (!value.ok()) return value.error();
  auto plan = decodePlan(*value);
  if (!plan) return protocol("recorded plan is corrupt: \"" + std::string(*value) + "\"");
  return *plan;
}

template <typename Kind, std::size_t N>
Result<Kind> decodeName(const redis::ReplyView& reply,
                        const std::pair<std::string_view, Kind> (&names)[N]) {
  auto name = text(reply);
  if (!name.ok()) return name.error();
  for (const auto& [known, kind] : names) {
    if (*name == known) return kind;
  }
  return protocol("unexpected reply \"" + std::string(*name) + "\"");
}

}  // namespace

namespace {

// The flow notes a *start* reply ends with (flow_lua_library.h flow_reply): an array of
// [kind, index, detail, at]; `count` becomes the size of the reply without them.
Status decodeFlowNotes(const redis::ReplyView& reply, std::size_t& count,
                       std::vector<FlowNote>& notes) {
  count = reply.size();
  if (count < 2) return {};
  auto last = reply.at(count - 1);
  if (!last.ok() || !last->isArray()) return {};
  --count;
  for (std::size_t i = 0; i < last->size(); ++i) {
    auto note = last->at(i);
    if (!note.ok()) return protocol(note.error().message);
    auto kind = textAt(*note, 0);
    auto index = integerAt(*note, 1);
    auto detail = textAt(*note, 2);
    auto at = integerAt(*note, 3);
    if (!kind.ok() || !index.ok() || !detail.ok() || !at.ok()) return protocol("bad flow note");
    FlowNote decoded;
    if (*kind == "deferred") {
      decoded.kind = FlowNote::Kind::kDeferred;
      decoded.reason = std::string(*detail);
    } else if (*kind == "deduplicated" || *kind == "superseded") {
      decoded.kind =
          *kind == "deduplicated" ? FlowNote::Kind::kDeduplicated : FlowNote::Kind::kSuperseded;
      decoded.other = std::string(*detail);
    } else {
      return protocol("unknown flow note \"" + std::string(*kind) + "\"");
    }
    decoded.index = static_cast<std::size_t>(*index);
    decoded.at = *at;
    notes.push_back(std::move(decoded));
  }
  return {};
}

}  // namespace

Result<StartVerdict> decodeStart(const redis::ReplyView& reply) {
  auto name = textAt(reply, 0);
  if (!name.ok()) return name.error();
  StartVerdict verdict;
  std::size_t count = 0;
  if (Status notes = decodeFlowNotes(reply, count, verdict.flow); !notes.ok()) {
    return notes.error();
  }
  using Kind = StartVerdict::Kind;
  if (*name == "run" || *name == "busy") {
    verdict.kind = *name == "run" ? Kind::kRun : Kind::kBusy;
    auto index = integerAt(reply, 1);
    auto attempt = integerAt(reply, 2);
    if (!index.ok() || !attempt.ok()) return protocol("start: bad run/busy reply");
    verdict.index = static_cast<std::size_t>(*index);
    verdict.attempt = static_cast<int>(*attempt);
    if (count > 3) {  // a new claim: whether its journal record was written
      auto unjournaled = integerAt(reply, 3);
      if (!unjournaled.ok()) return unjournaled.error();
      verdict.journal_failed = *unjournaled != 0;
    }
  } else if (*name == "slot") {
    verdict.kind = Kind::kSlot;
    auto index = integerAt(reply, 1);
    if (!index.ok()) return protocol("start: bad slot reply");
    verdict.index = static_cast<std::size_t>(*index);
  } else if (*name == "pending") {
    verdict.kind = Kind::kPending;
    auto until = integerAt(reply, 1);
    if (!until.ok()) return protocol("start: bad pending reply");
    verdict.until = *until;
    for (std::size_t i = 2; i < count; ++i) {
      auto app = textAt(reply, i);
      if (!app.ok()) return app.error();
      verdict.paused.emplace_back(*app);
    }
  } else if (*name == "gone") {
    verdict.kind = Kind::kGone;
  } else if (*name == "elsewhere") {
    verdict.kind = Kind::kElsewhere;
    auto owner = textAt(reply, 1);
    if (!owner.ok()) return owner.error();
    verdict.owner = std::string(*owner);
  } else if (*name == "done") {
    verdict.kind = Kind::kDone;
  } else if (*name == "retained") {
    verdict.kind = Kind::kRetained;
  } else if (*name == "owes") {
    verdict.kind = Kind::kOwesDlq;
    for (std::size_t i = 1; i + 2 < count; i += 3) {
      auto index = integerAt(reply, i);
      auto attempt = integerAt(reply, i + 1);
      auto why = textAt(reply, i + 2);
      if (!index.ok() || !attempt.ok() || !why.ok()) return protocol("start: bad owes reply");
      verdict.owed.emplace_back(static_cast<std::size_t>(*index), static_cast<int>(*attempt));
      verdict.owed_states.emplace_back(*why);
    }
  } else if (*name == "replan") {
    verdict.kind = Kind::kReplan;
    auto plan = planAt(reply, 1);
    if (!plan.ok()) return plan.error();
    verdict.plan = std::move(plan).value();
    if (count > 2) {  // the recorded plan's deadlines (docs/apps.md "Deadlines")
      auto limits = textAt(reply, 2);
      if (!limits.ok() || !applyLimits(verdict.plan, *limits)) {
        return protocol("start: recorded limits are corrupt");
      }
    }
  } else if (*name == "corrupt") {
    auto field = textAt(reply, 1);
    auto value = textAt(reply, 2);
    return Error::internal(
        "invocation state of " + std::string(field.ok() ? *field : std::string_view("?")) +
        " is corrupt: \"" + std::string(value.ok() ? *value : std::string_view("?")) + "\"");
  } else {
    return protocol("start returned \"" + std::string(*name) + "\"");
  }
  return verdict;
}

Result<CompleteVerdict> decodeComplete(const redis::ReplyView& reply) {
  auto name = textAt(reply, 0);
  auto acked = integerAt(reply, 1);
  auto written = integerAt(reply, 2);
  auto failures = integerAt(reply, 3);
  auto unjournaled = integerAt(reply, 4);
  auto woke = integerAt(reply, 5);
  if (!name.ok() || !acked.ok() || !written.ok() || !failures.ok() || !unjournaled.ok() ||
      !woke.ok()) {
    return protocol("complete: bad reply");
  }
  static constexpr std::pair<std::string_view, CompleteVerdict::Kind> kNames[] = {
      {"succeeded", CompleteVerdict::Kind::kSucceeded},
      {"failed", CompleteVerdict::Kind::kFailed},
      {"exhausted", CompleteVerdict::Kind::kExhausted},
      {"cancelled", CompleteVerdict::Kind::kCancelled},
      {"stale", CompleteVerdict::Kind::kStale},
      {"retained", CompleteVerdict::Kind::kRetained},
      {"deferred", CompleteVerdict::Kind::kDeferred}};
  for (const auto& [known, kind] : kNames) {
    if (*name == known) {
      return CompleteVerdict{kind,
                             *written != 0,
                             *acked != 0,
                             static_cast<int>(*failures),
                             *unjournaled != 0,
                             static_cast<int>(*woke)};
    }
  }
  return protocol("complete returned \"" + std::string(*name) + "\"");
}

Result<DlqVerdict> decodeDlq(const redis::ReplyView& reply) {
  auto name = textAt(reply, 0);
  if (!name.ok()) return name.error();
  DlqVerdict verdict;
  if (*name == "planned") {
    verdict.kind = DlqVerdict::Kind::kPlanned;
    auto plan = planAt(reply, 1);
    if (!plan.ok()) return plan.error();
    verdict.plan = std::move(plan).value();
    return verdict;
  }
  auto acked = integerAt(reply, 1);
  if (!acked.ok()) return acked.error();
  verdict.acked = *acked != 0;
  if (reply.size() > 2) {
    auto failures = integerAt(reply, 2);
    if (!failures.ok()) return failures.error();
    verdict.stats_failures = static_cast<int>(*failures);
  }
  static constexpr std::pair<std::string_view, DlqVerdict::Kind> kNames[] = {
      {"written", DlqVerdict::Kind::kWritten},
      {"exists", DlqVerdict::Kind::kExists},
      {"stale", DlqVerdict::Kind::kStale},
      {"retained", DlqVerdict::Kind::kRetained}};
  for (const auto& [known, kind] : kNames) {
    if (*name == known) {
      verdict.kind = kind;
      return verdict;
    }
  }
  return protocol("write_dlq returned \"" + std::string(*name) + "\"");
}

std::vector<Result<AckVerdict>> decodeAcks(const redis::Result<redis::Reply>& reply,
                                           std::size_t count) {
  std::vector<Result<AckVerdict>> verdicts;
  for (std::size_t i = 0; i < count; ++i) {
    if (!reply.ok()) {
      verdicts.emplace_back(reply.error().toRelay());
      continue;
    }
    auto name = textAt(reply->view(), 2 * i);
    if (!name.ok()) {
      verdicts.emplace_back(name.error());
      continue;
    }
    AckVerdict verdict;
    if (*name == "retained") {
      verdict.kind = AckVerdict::Kind::kRetained;
    } else if (*name == "unresolved") {
      verdict.kind = AckVerdict::Kind::kUnresolved;
      auto plan = planAt(reply->view(), 2 * i + 1);
      if (!plan.ok()) {
        verdicts.emplace_back(plan.error());
        continue;
      }
      verdict.plan = std::move(plan).value();
    } else if (*name != "acked") {
      verdicts.emplace_back(protocol("acknowledge returned \"" + std::string(*name) + "\""));
      continue;
    }
    verdicts.emplace_back(std::move(verdict));
  }
  return verdicts;
}

Result<CancelVerdict> decodeCancel(const redis::ReplyView& reply) {
  auto name = textAt(reply, 0);
  if (!name.ok()) return name.error();
  CancelVerdict verdict;
  using Kind = CancelVerdict::Kind;
  if (*name == "finished") {
    verdict.kind = Kind::kFinished;
  } else if (*name == "missing") {
    verdict.kind = Kind::kMissing;
  } else if (*name == "requested") {
    verdict.kind = Kind::kRequested;
  } else if (*name == "applied" || *name == "acked") {
    verdict.kind = Kind::kApplied;
    verdict.acked = *name == "acked";
    static constexpr std::pair<std::string_view, CancelledInvocation::What> kWhats[] = {
        {"cancelled", CancelledInvocation::What::kCancelled},
        {"running", CancelledInvocation::What::kRunning},
        {"orphaned", CancelledInvocation::What::kOrphaned},
        {"finished", CancelledInvocation::What::kFinished}};
    for (std::size_t i = 1; i + 2 < reply.size(); i += 3) {
      auto field = textAt(reply, i);
      auto what = textAt(reply, i + 1);
      auto token = textAt(reply, i + 2);
      if (!field.ok() || !what.ok() || !token.ok()) return protocol("cancel: bad reply");
      CancelledInvocation invocation{std::string(*field), CancelledInvocation::What::kFinished,
                                     std::string(*token)};
      bool known = false;
      for (const auto& [text, kind] : kWhats) {
        if (*what == text) {
          invocation.what = kind;
          known = true;
        }
      }
      if (!known) return protocol("cancel: unexpected \"" + std::string(*what) + "\"");
      verdict.invocations.push_back(std::move(invocation));
    }
  } else {
    return protocol("cancel returned \"" + std::string(*name) + "\"");
  }
  return verdict;
}

Result<ReleaseVerdict> decodeRelease(const redis::ReplyView& reply) {
  static constexpr std::pair<std::string_view, ReleaseVerdict> kNames[] = {
      {"released", ReleaseVerdict::kReleased},
      {"not_held", ReleaseVerdict::kNotHeld},
      {"retained", ReleaseVerdict::kRetained}};
  return decodeName(reply, kNames);
}

Result<BeginVerdict> decodeBegin(const redis::ReplyView& reply) {
  static constexpr std::pair<std::string_view, BeginVerdict> kNames[] = {
      {"running", BeginVerdict::kRunning},
      {"lost", BeginVerdict::kLost},
      {"retained", BeginVerdict::kRetained}};
  return decodeName(reply, kNames);
}

Result<RenewVerdict> decodeRenew(const redis::ReplyView& reply) {
  static constexpr std::pair<std::string_view, RenewVerdict> kNames[] = {
      {"renewed", RenewVerdict::kRenewed},
      {"lost", RenewVerdict::kLost},
      {"retained", RenewVerdict::kRetained}};
  return decodeName(reply, kNames);
}

}  // namespace relay::invocation
