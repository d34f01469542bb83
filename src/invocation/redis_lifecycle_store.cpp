#include "invocation/redis_lifecycle_store.h"

#include <charconv>
#include <utility>

#include "invocation/keys.h"

namespace relay::invocation {
namespace {

using Reply = redis::Result<redis::Reply>;

Error protocol(std::string message) {
  return Error::internal("lifecycle script: " + std::move(message));
}

std::string millis(std::chrono::milliseconds duration) { return std::to_string(duration.count()); }

// Failures that a new connection may not see again: the transport broke, or the server is a
// replica / still loading (a failover in progress). Every verb is idempotent for its token.
bool transient(const redis::Error& error) {
  if (error.kind != redis::ErrorKind::kReply) return error.kind != redis::ErrorKind::kProtocol;
  for (std::string_view code : {"LOADING", "READONLY", "MASTERDOWN", "TRYAGAIN"}) {
    if (redis::isReplyError(error, code)) return true;
  }
  return false;
}

// The decoding of every script reply, in one place next to the Lua.
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

Result<StartVerdict> decodeStart(const redis::ReplyView& reply) {
  auto name = textAt(reply, 0);
  if (!name.ok()) return name.error();
  StartVerdict verdict;
  using Kind = StartVerdict::Kind;
  if (*name == "run" || *name == "busy") {
    verdict.kind = *name == "run" ? Kind::kRun : Kind::kBusy;
    auto index = integerAt(reply, 1);
    auto attempt = integerAt(reply, 2);
    if (!index.ok() || !attempt.ok()) return protocol("start: bad run/busy reply");
    verdict.index = static_cast<std::size_t>(*index);
    verdict.attempt = static_cast<int>(*attempt);
  } else if (*name == "pending") {
    verdict.kind = Kind::kPending;
  } else if (*name == "done") {
    verdict.kind = Kind::kDone;
  } else if (*name == "retained") {
    verdict.kind = Kind::kRetained;
  } else if (*name == "owes") {
    verdict.kind = Kind::kOwesDlq;
    for (std::size_t i = 1; i + 1 < reply.size(); i += 2) {
      auto index = integerAt(reply, i);
      auto attempt = integerAt(reply, i + 1);
      if (!index.ok() || !attempt.ok()) return protocol("start: bad owes reply");
      verdict.owed.emplace_back(static_cast<std::size_t>(*index), static_cast<int>(*attempt));
    }
  } else if (*name == "replan") {
    verdict.kind = Kind::kReplan;
    auto plan = planAt(reply, 1);
    if (!plan.ok()) return plan.error();
    verdict.plan = std::move(plan).value();
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
  if (!name.ok() || !acked.ok() || !written.ok() || !failures.ok()) {
    return protocol("complete: bad reply");
  }
  static constexpr std::pair<std::string_view, CompleteVerdict::Kind> kNames[] = {
      {"succeeded", CompleteVerdict::Kind::kSucceeded},
      {"failed", CompleteVerdict::Kind::kFailed},
      {"exhausted", CompleteVerdict::Kind::kExhausted},
      {"stale", CompleteVerdict::Kind::kStale},
      {"retained", CompleteVerdict::Kind::kRetained}};
  for (const auto& [known, kind] : kNames) {
    if (*name == known) {
      return CompleteVerdict{kind, *written != 0, *acked != 0, static_cast<int>(*failures)};
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

Result<AckVerdict> decodeAck(const redis::ReplyView& reply) {
  auto name = textAt(reply, 0);
  if (!name.ok()) return name.error();
  AckVerdict verdict;
  if (*name == "acked") return verdict;
  if (*name == "retained") {
    verdict.kind = AckVerdict::Kind::kRetained;
    return verdict;
  }
  if (*name != "unresolved") return protocol("acknowledge returned \"" + std::string(*name) + "\"");
  verdict.kind = AckVerdict::Kind::kUnresolved;
  auto plan = planAt(reply, 1);
  if (!plan.ok()) return plan.error();
  verdict.plan = std::move(plan).value();
  return verdict;
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

RedisLifecycleStore::RedisLifecycleStore(RedisStoreSettings settings, redis::Endpoint endpoint,
                                         Clock& clock)
    : settings_(std::move(settings)), endpoint_(std::move(endpoint)), clock_(clock) {}

RedisLifecycleStore::~RedisLifecycleStore() = default;

Reply RedisLifecycleStore::eval(const redis::Script& script, const std::vector<std::string>& keys,
                                const std::vector<std::string>& args) {
  std::chrono::milliseconds wait = settings_.retry_wait;
  for (int attempt = 0;; ++attempt) {
    if (!connection_ || !connection_->ok()) {
      auto created = redis::Connection::create(endpoint_, settings_.connection);
      if (created.ok()) connection_ = std::move(created).value();
      if (!created.ok() && attempt >= settings_.retries) return created.error();
    }
    if (connection_ && connection_->ok()) {
      Reply reply = connection_->eval(script, keys, args);
      if (reply.ok() || !transient(reply.error()) || attempt >= settings_.retries) return reply;
      if (reply.error().kind == redis::ErrorKind::kReply) connection_.reset();
    }
    clock_.sleepFor(wait);
    wait *= 2;
  }
}

Result<StartVerdict> RedisLifecycleStore::start(std::string_view id, const Plan& candidate,
                                                const std::vector<bool>& runnable,
                                                std::string_view token, const ClaimTimes& times) {
  std::string mask;
  for (bool flag : runnable) mask += flag ? '1' : '0';
  auto reply = eval(scripts_.start, {settings_.keys.state(id), settings_.keys.due()},
                    {encodePlan(candidate), mask, std::string(token), millis(times.grace),
                     millis(times.lease), millis(times.margin), std::string(id)});
  if (!reply.ok()) return reply.error().toRelay();
  return decodeStart(*reply);
}

Result<CompleteVerdict> RedisLifecycleStore::complete(std::string_view id, std::string_view field,
                                                      std::string_view token,
                                                      const AttemptResult& result,
                                                      const DlqEntry* dlq) {
  const StreamKeys& keys = settings_.keys;
  std::vector<std::string> args = {
      std::string(field),
      std::string(token),
      result.succeeded ? "succeeded" : "failed",
      millis(result.retry_delay),
      millis(settings_.retention),
      keys.group,
      std::string(id),
      std::to_string(std::chrono::duration<double>(result.duration).count()),
      result.exit_reason,
      result.output_tail};
  if (dlq && !result.succeeded) {
    for (auto& [name, value] : dlq->fields()) {
      args.push_back(std::move(name));
      args.push_back(std::move(value));
    }
  }
  auto reply = eval(scripts_.complete,
                    {keys.state(id), keys.due(), keys.stream, keys.dlq(), keys.stats()}, args);
  if (!reply.ok()) return reply.error().toRelay();
  return decodeComplete(*reply);
}

Result<ReleaseVerdict> RedisLifecycleStore::release(std::string_view id, std::string_view field,
                                                    std::string_view token,
                                                    std::chrono::milliseconds retry_after) {
  auto reply = eval(scripts_.release, {settings_.keys.state(id), settings_.keys.due()},
                    {std::string(field), std::string(token), millis(retry_after), std::string(id)});
  if (!reply.ok()) return reply.error().toRelay();
  static constexpr std::pair<std::string_view, ReleaseVerdict> kNames[] = {
      {"released", ReleaseVerdict::kReleased},
      {"not_held", ReleaseVerdict::kNotHeld},
      {"retained", ReleaseVerdict::kRetained}};
  return decodeName(*reply, kNames);
}

Result<RenewVerdict> RedisLifecycleStore::renew(std::string_view id, std::string_view field,
                                                std::string_view token,
                                                std::chrono::milliseconds extend) {
  const StreamKeys& keys = settings_.keys;
  auto reply = eval(scripts_.renew, {keys.state(id), keys.stream},
                    {std::string(field), std::string(token), millis(extend), keys.group,
                     settings_.consumer, std::string(id)});
  if (!reply.ok()) return reply.error().toRelay();
  static constexpr std::pair<std::string_view, RenewVerdict> kNames[] = {
      {"renewed", RenewVerdict::kRenewed},
      {"lost", RenewVerdict::kLost},
      {"retained", RenewVerdict::kRetained}};
  return decodeName(*reply, kNames);
}

Result<DlqVerdict> RedisLifecycleStore::writeDlq(std::string_view id, std::string_view field,
                                                 const DlqEntry& entry) {
  auto reply = eval(scripts_.write_dlq, dlqKeys(id), dlqArgs(id, field, entry));
  if (!reply.ok()) return reply.error().toRelay();
  return decodeDlq(*reply);
}

Result<AckVerdict> RedisLifecycleStore::acknowledge(std::string_view id, bool obsolete_occurrence) {
  auto reply = eval(scripts_.acknowledge, ackKeys(id), ackArgs(id, obsolete_occurrence));
  if (!reply.ok()) return reply.error().toRelay();
  return decodeAck(*reply);
}

Status RedisLifecycleStore::clearMissing(std::string_view id) {
  const StreamKeys& keys = settings_.keys;
  auto reply = eval(scripts_.clear_missing, {keys.stream, keys.state(id), keys.due()},
                    {keys.group, std::string(id), millis(settings_.retention)});
  if (!reply.ok()) return reply.error().toRelay();
  return {};
}

Status RedisLifecycleStore::journal(std::string_view id, const AttemptRecord& record) {
  auto reply = eval(scripts_.journal, {settings_.keys.attempts(id)},
                    {attemptField(record), encodeAttempt(record), millis(settings_.retention)});
  if (!reply.ok()) return reply.error().toRelay();
  return {};
}

std::vector<std::string> RedisLifecycleStore::ackKeys(std::string_view id) const {
  const StreamKeys& keys = settings_.keys;
  return {keys.stream, keys.state(id), keys.due()};
}

std::vector<std::string> RedisLifecycleStore::ackArgs(std::string_view id,
                                                      bool obsolete_occurrence) const {
  return {settings_.keys.group, std::string(id), millis(settings_.retention),
          obsolete_occurrence ? "1" : "0"};
}

std::vector<std::string> RedisLifecycleStore::dlqKeys(std::string_view id) const {
  const StreamKeys& keys = settings_.keys;
  return {keys.state(id), keys.dlq(), keys.stream, keys.due(), keys.stats()};
}

std::vector<std::string> RedisLifecycleStore::dlqArgs(std::string_view id, std::string_view field,
                                                      const DlqEntry& entry) const {
  std::vector<std::string> args = {std::string(field), millis(settings_.retention),
                                   settings_.keys.group, std::string(id)};
  for (auto& [name, value] : entry.fields()) {
    args.push_back(std::move(name));
    args.push_back(std::move(value));
  }
  return args;
}

std::vector<Result<SettleVerdict>> RedisLifecycleStore::settle(
    const std::vector<SettleRequest>& requests) {
  if (requests.empty()) return {};
  // One EVALSHA per request in one pipeline. What it cannot answer (a broken connection, a lost
  // script cache) runs again alone through eval() (reconnect, retry, EVAL): verbs are idempotent.
  std::vector<std::vector<std::string>> commands;
  for (const SettleRequest& request : requests) {
    const bool dlq = request.dlq.has_value();
    const redis::Script& script = dlq ? scripts_.write_dlq : scripts_.acknowledge;
    const std::vector<std::string> keys = dlq ? dlqKeys(request.id) : ackKeys(request.id);
    std::vector<std::string> command = {"EVALSHA", script.sha1(), std::to_string(keys.size())};
    command.insert(command.end(), keys.begin(), keys.end());
    for (std::string& arg : dlq ? dlqArgs(request.id, kMalformedField, *request.dlq)
                                : ackArgs(request.id, request.obsolete_occurrence)) {
      command.push_back(std::move(arg));
    }
    commands.push_back(std::move(command));
  }
  std::optional<std::vector<redis::Result<redis::Reply>>> replies;
  if (!connection_ || !connection_->ok()) {
    auto created = redis::Connection::create(endpoint_, settings_.connection);
    if (created.ok()) connection_ = std::move(created).value();
  }
  if (connection_ && connection_->ok()) {
    auto sent = connection_->pipeline(commands);
    if (sent.ok()) replies = std::move(sent).value();
  }
  std::vector<Result<SettleVerdict>> verdicts;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const SettleRequest& request = requests[i];
    const bool dlq = request.dlq.has_value();
    Reply reply = replies && i < replies->size()
                      ? std::move((*replies)[i])
                      : Reply(redis::Error{redis::ErrorKind::kClosed, "not sent"});
    if (!reply.ok() &&
        (reply.error().kind != redis::ErrorKind::kReply ||
         redis::isReplyError(reply.error(), "NOSCRIPT") || transient(reply.error()))) {
      reply = dlq ? eval(scripts_.write_dlq, dlqKeys(request.id),
                         dlqArgs(request.id, kMalformedField, *request.dlq))
                  : eval(scripts_.acknowledge, ackKeys(request.id),
                         ackArgs(request.id, request.obsolete_occurrence));
    }
    if (!reply.ok()) {
      verdicts.emplace_back(reply.error().toRelay());
      continue;
    }
    if (dlq) {
      auto written = decodeDlq(*reply);
      if (written.ok()) {
        verdicts.emplace_back(SettleVerdict{{}, std::move(written).value()});
      } else {
        verdicts.emplace_back(written.error());
      }
    } else {
      auto acked = decodeAck(*reply);
      if (acked.ok()) {
        verdicts.emplace_back(SettleVerdict{std::move(acked).value(), std::nullopt});
      } else {
        verdicts.emplace_back(acked.error());
      }
    }
  }
  return verdicts;
}

}  // namespace relay::invocation
