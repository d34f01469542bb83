#include "invocation/redis_lifecycle_store.h"

#include <cstdio>
#include <utility>

#include "invocation/keys.h"
#include "invocation/lifecycle_replies.h"

namespace relay::invocation {
namespace {

using Reply = redis::Result<redis::Reply>;

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

// A pipelined reply that a call alone through eval() may still get: the connection broke, the
// script cache was flushed (NOSCRIPT), or a failover is in progress.
bool runAgainAlone(const Reply& reply) {
  return !reply.ok() &&
         (reply.error().kind != redis::ErrorKind::kReply ||
          redis::isReplyError(reply.error(), "NOSCRIPT") || transient(reply.error()));
}

std::string decimal(double value) {
  char text[48];
  std::snprintf(text, sizeof text, "%.6f", value);
  return text;
}

// Appends `name` to the script's KEYS; its 1-based index there, as the Lua reads it.
std::string keyIndex(std::vector<std::string>& keys, std::string name) {
  keys.push_back(std::move(name));
  return std::to_string(keys.size());
}

// A key gate's lines (flow_lua_library.h) for invocation `inv` (1-based; 0 for a held slot).
std::string keyGateSpec(const StreamKeys& names, const KeyGate& gate, const std::string& scope,
                        std::size_t inv, std::vector<std::string>& keys) {
  std::string line = "k " + std::to_string(inv) + " " +
                     keyIndex(keys, names.flow("run", scope, gate.value)) + " " +
                     keyIndex(keys, names.flow("wait", scope, gate.value)) + " " +
                     std::to_string(gate.limit) + " ";
  line += gate.singleton && inv > 0 ? keyIndex(keys, names.flow("latest", scope, gate.value)) : "0";
  return line + "\n";
}

// The context line of the flow Lua: statistics, the promise, the stream, the due index.
std::string flowContext(const StreamKeys& names, std::vector<std::string>& keys,
                        const std::string& stream, const std::string& due,
                        std::chrono::milliseconds promise, bool stats) {
  return "f " + (stats ? keyIndex(keys, names.stats()) : std::string("0")) + " " + millis(promise) +
         " " + stream + " " + due + " " + names.group + "\n";
}

// The flow gates of a start() request (flow_lua_library.h): their keys appended to `keys`.
// `stream`: the stream's index in KEYS (the due index is always KEYS[2]).
std::string startFlow(const StreamKeys& names, const Plan& plan, std::chrono::milliseconds promise,
                      std::vector<std::string>& keys, const std::string& stream = "4") {
  std::string spec;
  for (std::size_t i = 0; i < plan.invocations.size(); ++i) {
    const PlannedInvocation& planned = plan.invocations[i];
    const FlowControl& flow = planned.flow;
    if (flow.empty()) continue;
    if (spec.empty()) spec = flowContext(names, keys, stream, "2", promise, true);
    const std::string inv = std::to_string(i + 1);
    const std::string field = planned.field();
    for (const ThrottleGate& gate : flow.throttles) {
      const double interval =
          static_cast<double>(gate.period.count()) / static_cast<double>(gate.limit);
      spec +=
          "t " + inv + " " +
          keyIndex(keys, names.flow("throttle", flowScopeName(gate.scope, planned.app, field))) +
          " " + decimal(interval) + " " + decimal(interval * gate.burst) + " " +
          millis(gate.period) + "\n";
    }
    if (flow.key) {
      spec += keyGateSpec(names, *flow.key, flowScopeName(flow.key->scope, planned.app, field),
                          i + 1, keys);
    }
    if (flow.dedupe) {
      const std::string scope = flowScopeName(flow.dedupe->scope, planned.app, field);
      spec += "d " + inv + " " + keyIndex(keys, names.flow("dedupe", scope, flow.dedupe->value)) +
              " " + millis(flow.dedupe->ttl) + "\n";
    }
    if (flow.debounce) {
      const std::string scope = flowScopeName(flow.debounce->scope, planned.app, field);
      spec += "b " + inv + " " +
              keyIndex(keys, names.flow("debounce", scope, flow.debounce->value)) + " " +
              millis(flow.debounce->period) + " " + millis(flow.debounce->max_wait) + "\n";
    }
  }
  return spec;
}

// The key slots a claim of `field` holds (complete, release, renew), their keys appended.
std::string heldFlow(const StreamKeys& names, std::string_view field, const FlowControl* flow,
                     std::chrono::milliseconds promise, const std::string& stream,
                     const std::string& due, std::vector<std::string>& keys) {
  if (!flow || !flow->key) return {};
  const std::string_view app = field.substr(0, field.find('/'));
  return flowContext(names, keys, stream, due, promise, false) +
         keyGateSpec(names, *flow->key, flowScopeName(flow->key->scope, app, field), 0, keys);
}

std::vector<std::string> evalsha(const redis::Script& script, std::vector<std::string> keys,
                                 std::vector<std::string> args) {
  std::vector<std::string> command = {"EVALSHA", script.sha1(), std::to_string(keys.size())};
  for (std::string& key : keys) command.push_back(std::move(key));
  for (std::string& arg : args) command.push_back(std::move(arg));
  return command;
}

// The cancel script's {'flow', <recorded plan>}: asked again with the plan's flow gates.
std::optional<std::string> flowOfCancel(const redis::ReplyView& reply) {
  if (reply.size() != 2) return std::nullopt;
  auto name = reply.at(0);
  auto plan = reply.at(1);
  if (!name.ok() || !plan.ok()) return std::nullopt;
  auto kind = name->string();
  auto text = plan->string();
  if (!kind.ok() || *kind != "flow" || !text.ok()) return std::nullopt;
  return std::string(*text);
}

}  // namespace

RedisLifecycleStore::RedisLifecycleStore(RedisStoreSettings settings, redis::Endpoint endpoint,
                                         Clock& clock)
    : settings_(std::move(settings)), endpoint_(std::move(endpoint)), clock_(clock) {}

RedisLifecycleStore::~RedisLifecycleStore() = default;

Reply RedisLifecycleStore::eval(const redis::Script& script, const std::vector<std::string>& keys,
                                const std::vector<std::string>& args) {
  if (!settings_.group) return evalAlone(script, keys, args);
  Reply reply = settings_.group->call(evalsha(script, keys, args));
  if (!runAgainAlone(reply)) return reply;
  reply = evalAlone(script, keys, args);
  // The group carries the next call: no connection of this store's own stays open for it.
  connection_.reset();
  return reply;
}

Reply RedisLifecycleStore::evalAlone(const redis::Script& script,
                                     const std::vector<std::string>& keys,
                                     const std::vector<std::string>& args) {
  redis::Backoff backoff(settings_.retry_wait);
  for (int attempt = 0;; ++attempt) {
    auto connected = redis::reconnect(connection_, endpoint_, settings_.connection);
    if (!connected.ok() && attempt >= settings_.retries) return connected.error();
    if (connected.ok()) {
      Reply reply = connection_->eval(script, keys, args);
      if (reply.ok() || !transient(reply.error()) || attempt >= settings_.retries) return reply;
      if (reply.error().kind == redis::ErrorKind::kReply) connection_.reset();
    }
    clock_.sleepFor(backoff.next());
  }
}

Result<StartVerdict> RedisLifecycleStore::start(std::string_view id, const StartRequest& request) {
  const StreamKeys& keys = settings_.keys;
  std::string mask;
  for (std::size_t i = 0; i < request.candidate.invocations.size(); ++i) {
    mask += static_cast<char>(i < request.runnable.size() ? request.runnable[i]
                                                          : Runnability::kNotHere);
  }
  std::string backoff;
  for (const std::chrono::milliseconds delay : request.backoff.delays) {
    if (!backoff.empty()) backoff += ',';
    backoff += millis(delay);
  }
  const ClaimTimes& times = request.times;
  std::vector<std::string> names = {keys.state(id), keys.due(),         keys.attempts(id),
                                    keys.stream,    keys.paused(),      keys.pausedQueue(),
                                    keys.clock(),   keys.legacyPaused()};
  std::string flow = startFlow(keys, request.candidate, settings_.key_promise, names);
  auto reply = eval(
      scripts_.start, names,
      {encodePlan(request.candidate), mask, request.token, millis(times.grace), millis(times.lease),
       millis(times.margin), std::string(id),
       request.started ? encodeAttempt(*request.started) : std::string(),
       millis(settings_.retention), keys.group, request.consumer, std::string(kParkingConsumer),
       backoff, millis(request.retry_elsewhere), millis(times.outage_gap),
       millis(times.takeover_grace), std::move(flow), encodeLimits(request.candidate)});
  if (!reply.ok()) return reply.error().toRelay();
  return decodeStart(*reply);
}

Result<BeginVerdict> RedisLifecycleStore::begin(std::string_view id, std::string_view field,
                                                std::string_view token) {
  auto reply =
      eval(scripts_.begin, {settings_.keys.state(id)}, {std::string(field), std::string(token)});
  if (!reply.ok()) return reply.error().toRelay();
  return decodeBegin(*reply);
}

Status RedisLifecycleStore::heartbeat(const ClaimTimes& times) {
  auto reply = eval(scripts_.heartbeat, {settings_.keys.clock()},
                    {millis(times.outage_gap), millis(times.takeover_grace)});
  if (!reply.ok()) return reply.error().toRelay();
  return {};
}

Result<CompleteVerdict> RedisLifecycleStore::complete(std::string_view id, std::string_view field,
                                                      std::string_view token,
                                                      const AttemptResult& result,
                                                      const DlqEntry* dlq,
                                                      const AttemptRecord* finished,
                                                      const FlowControl* flow) {
  const StreamKeys& keys = settings_.keys;
  std::vector<std::string> names = {keys.state(id), keys.due(),   keys.stream,
                                    keys.dlq(),     keys.stats(), keys.attempts(id)};
  std::string held = heldFlow(keys, field, flow, settings_.key_promise, "3", "2", names);
  std::vector<std::string> args = {
      std::string(field),
      std::string(token),
      result.succeeded   ? "succeeded"
      : result.cancelled ? "cancelled"
      : result.deferred  ? "deferred"
                         : "failed",
      millis(result.retry_delay),
      millis(settings_.retention),
      keys.group,
      std::string(id),
      std::to_string(std::chrono::duration<double>(result.duration).count()),
      result.exit_reason,
      result.output_tail,
      finished ? attemptField(*finished) : std::string(),
      finished ? encodeAttempt(*finished) : std::string(),
      std::move(held),
      std::to_string(result.max_deferrals),
      millis(result.retry_after)};
  if (dlq && !result.succeeded) {
    for (auto& [name, value] : dlq->fields()) {
      args.push_back(std::move(name));
      args.push_back(std::move(value));
    }
  }
  auto reply = eval(scripts_.complete, names, args);
  if (!reply.ok()) return reply.error().toRelay();
  return decodeComplete(*reply);
}

Result<ReleaseVerdict> RedisLifecycleStore::release(std::string_view id, std::string_view field,
                                                    std::string_view token,
                                                    std::chrono::milliseconds retry_after,
                                                    bool unjournal, const FlowControl* flow) {
  const StreamKeys& keys = settings_.keys;
  std::vector<std::string> names = {keys.state(id), keys.due(), keys.attempts(id), keys.stream};
  std::string held = heldFlow(keys, field, flow, settings_.key_promise, "4", "2", names);
  auto reply = eval(scripts_.release, names,
                    {std::string(field), std::string(token), millis(retry_after), std::string(id),
                     unjournal ? "1" : "0", std::move(held)});
  if (!reply.ok()) return reply.error().toRelay();
  return decodeRelease(*reply);
}

Result<RenewVerdict> RedisLifecycleStore::renew(std::string_view id, std::string_view field,
                                                std::string_view token,
                                                std::chrono::milliseconds extend,
                                                const FlowControl* flow) {
  const StreamKeys& keys = settings_.keys;
  std::vector<std::string> names = {keys.state(id), keys.stream};
  std::string held = heldFlow(keys, field, flow, settings_.key_promise, "2", "0", names);
  auto reply = eval(scripts_.renew, names,
                    {std::string(field), std::string(token), millis(extend), keys.group,
                     settings_.consumer, std::string(id), std::move(held)});
  if (!reply.ok()) return reply.error().toRelay();
  return decodeRenew(*reply);
}

Result<DlqVerdict> RedisLifecycleStore::writeDlq(std::string_view id, std::string_view field,
                                                 const DlqEntry& entry) {
  auto reply = eval(scripts_.write_dlq, dlqKeys(id), dlqArgs(id, field, entry));
  if (!reply.ok()) return reply.error().toRelay();
  return decodeDlq(*reply);
}

Result<AckVerdict> RedisLifecycleStore::acknowledge(std::string_view id, bool obsolete_occurrence) {
  return std::move(acknowledgeAll({{id, obsolete_occurrence}}).front());
}

std::vector<Result<AckVerdict>> RedisLifecycleStore::acknowledgeAll(const AckBatch& batch) {
  return decodeAcks(eval(scripts_.acknowledge, ackKeys(batch), ackArgs(batch)), batch.size());
}

Status RedisLifecycleStore::clearMissing(std::string_view id) {
  const StreamKeys& keys = settings_.keys;
  auto reply = eval(scripts_.clear_missing, {keys.stream, keys.state(id), keys.due()},
                    {keys.group, std::string(id), millis(settings_.retention)});
  if (!reply.ok()) return reply.error().toRelay();
  return {};
}

Result<CancelVerdict> RedisLifecycleStore::cancel(std::string_view id,
                                                  const CancelRequest& request) {
  const StreamKeys& keys = settings_.keys;
  std::vector<std::string> names = {keys.state(id), keys.due(), keys.stream, keys.cancels(),
                                    keys.pausedQueue()};
  std::vector<std::string> args = {std::string(id), request.target, request.dead_letter ? "1" : "0",
                                   request.id,      keys.group,     millis(settings_.retention),
                                   std::string()};
  auto reply = eval(scripts_.cancel, names, args);
  if (!reply.ok()) return reply.error().toRelay();
  if (auto recorded = flowOfCancel(*reply)) {
    // The recorded plan has flow gates: again, with their keys, so that a waiter cancelled
    // leaves its key's queue (docs/pipeline.md "Cancellation").
    const std::optional<Plan> plan = decodePlan(*recorded);
    if (!plan) return Error::internal("the recorded plan of " + std::string(id) + " is corrupt");
    args.back() = startFlow(keys, *plan, settings_.key_promise, names, "3");
    reply = eval(scripts_.cancel, names, args);
    if (!reply.ok()) return reply.error().toRelay();
  }
  return decodeCancel(*reply);
}

Status RedisLifecycleStore::journal(std::string_view id, const AttemptRecord& record) {
  auto reply = eval(scripts_.journal, {settings_.keys.attempts(id)},
                    {attemptField(record), encodeAttempt(record), millis(settings_.retention)});
  if (!reply.ok()) return reply.error().toRelay();
  return {};
}

std::vector<std::string> RedisLifecycleStore::ackKeys(const AckBatch& batch) const {
  const StreamKeys& keys = settings_.keys;
  std::vector<std::string> names = {keys.stream, keys.due()};
  for (const auto& [id, obsolete] : batch) names.push_back(keys.state(id));
  return names;
}

std::vector<std::string> RedisLifecycleStore::ackArgs(const AckBatch& batch) const {
  std::vector<std::string> args = {settings_.keys.group, millis(settings_.retention)};
  for (const auto& [id, obsolete] : batch) {
    args.emplace_back(id);
    args.emplace_back(obsolete ? "1" : "0");
  }
  return args;
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
  // One pipeline: the *acknowledge* call of every message to acknowledge first, then one
  // *write_dlq* call per entry. What it cannot answer (a broken connection, a lost script
  // cache) runs again alone through eval() (reconnect, retry, EVAL): verbs are idempotent.
  AckBatch acks;
  std::vector<const SettleRequest*> dlqs;
  for (const SettleRequest& request : requests) {
    if (request.dlq) {
      dlqs.push_back(&request);
    } else {
      acks.emplace_back(request.id, request.obsolete_occurrence);
    }
  }
  std::vector<std::vector<std::string>> commands;
  if (!acks.empty())
    commands.push_back(evalsha(scripts_.acknowledge, ackKeys(acks), ackArgs(acks)));
  for (const SettleRequest* request : dlqs) {
    commands.push_back(evalsha(scripts_.write_dlq, dlqKeys(request->id),
                               dlqArgs(request->id, kMalformedField, *request->dlq)));
  }
  std::optional<std::vector<Reply>> replies;
  if (redis::reconnect(connection_, endpoint_, settings_.connection).ok()) {
    auto sent = connection_->pipeline(commands);
    if (sent.ok()) replies = std::move(sent).value();
  }
  std::size_t next_reply = 0;
  const auto take = [&] {
    const std::size_t i = next_reply++;
    return replies && i < replies->size()
               ? std::move((*replies)[i])
               : Reply(redis::Error{redis::ErrorKind::kClosed, "not sent"});
  };
  std::vector<Result<AckVerdict>> acked;
  if (!acks.empty()) {
    Reply reply = take();
    acked = runAgainAlone(reply) ? acknowledgeAll(acks) : decodeAcks(reply, acks.size());
  }
  std::vector<Result<SettleVerdict>> verdicts;
  std::size_t next_ack = 0;
  for (const SettleRequest& request : requests) {
    if (!request.dlq) {
      Result<AckVerdict>& ack = acked[next_ack++];
      if (ack.ok()) {
        verdicts.emplace_back(SettleVerdict{std::move(ack).value(), std::nullopt});
      } else {
        verdicts.emplace_back(ack.error());
      }
      continue;
    }
    Reply reply = take();
    auto written = runAgainAlone(reply) ? writeDlq(request.id, kMalformedField, *request.dlq)
                   : reply.ok()         ? decodeDlq(*reply)
                                        : Result<DlqVerdict>(reply.error().toRelay());
    if (written.ok()) {
      verdicts.emplace_back(SettleVerdict{{}, std::move(written).value()});
    } else {
      verdicts.emplace_back(written.error());
    }
  }
  return verdicts;
}

}  // namespace relay::invocation
