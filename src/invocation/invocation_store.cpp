#include "invocation/invocation_store.h"

#include <utility>
#include <vector>

namespace relay::invocation {
namespace {

redis::Error protocol(std::string message) {
  return {redis::ErrorKind::kProtocol, std::move(message)};
}

redis::Result<Transition> transitionOf(const redis::Result<redis::Reply>& reply) {
  if (!reply.ok()) return reply.error();
  const auto text = reply->string();
  if (!text.ok()) return protocol("invocation script: " + text.error().message);
  static constexpr std::pair<std::string_view, Transition> kNames[] = {
      {"succeeded", Transition::kSucceeded}, {"failed", Transition::kFailed},
      {"exhausted", Transition::kExhausted}, {"released", Transition::kReleased},
      {"written", Transition::kWritten},     {"exists", Transition::kExists},
      {"stale", Transition::kStale},         {"retained", Transition::kRetained}};
  for (const auto& [name, transition] : kNames) {
    if (*text == name) return transition;
  }
  return protocol("invocation script returned \"" + std::string(*text) + "\"");
}

}  // namespace

InvocationStore::InvocationStore(StreamKeys keys, Clock& clock, Random& random)
    : keys_(std::move(keys)), clock_(clock), random_(random) {}

std::int64_t InvocationStore::nowMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock_.now().time_since_epoch())
      .count();
}

redis::Result<Claim> InvocationStore::tryStart(redis::Connection& redis, std::string_view id,
                                               std::string_view field, int max_attempts,
                                               std::chrono::milliseconds claim_for) {
  const std::int64_t now = nowMs();
  const std::string token = random_.token();
  auto reply = redis.eval(scripts_.try_start, {keys_.state(id)},
                          {std::string(field), std::to_string(now), token,
                           std::to_string(now + claim_for.count()), std::to_string(max_attempts)});
  if (!reply.ok()) return reply.error();
  const auto verdict = reply->at(0);
  const auto attempt = reply->at(1);
  const auto detail = reply->at(2);
  if (!verdict.ok() || !attempt.ok() || !detail.ok()) return protocol("try_start: bad reply shape");
  const auto name = verdict->string();
  const auto number = attempt->integer();
  const auto extra = detail->string();
  if (!name.ok() || !number.ok() || !extra.ok()) return protocol("try_start: bad reply types");
  Claim claim;
  claim.attempt = static_cast<int>(*number);
  const std::string text(*extra);
  if (*name == "run") {
    claim.verdict = Claim::Verdict::kRun;
    claim.token = text;
  } else if (*name == "busy" || *name == "wait") {
    claim.verdict = *name == "busy" ? Claim::Verdict::kBusy : Claim::Verdict::kWait;
    claim.until_ms = std::stoll(text);
  } else if (*name == "succeeded") {
    claim.verdict = Claim::Verdict::kSucceeded;
  } else if (*name == "exhausted" || *name == "dlq") {
    claim.verdict = *name == "dlq" ? Claim::Verdict::kDlqWritten : Claim::Verdict::kExhausted;
    claim.token = text;
  } else if (*name == "retained") {
    claim.verdict = Claim::Verdict::kRetained;
  } else {
    return protocol("invocation state of " + std::string(field) + " in " + keys_.state(id) +
                    " is corrupt: \"" + text + "\"");
  }
  return claim;
}

redis::Result<Transition> InvocationStore::complete(redis::Connection& redis, std::string_view id,
                                                    std::string_view field, std::string_view token,
                                                    bool succeeded,
                                                    std::chrono::milliseconds retry_delay,
                                                    int max_attempts) {
  return transitionOf(
      redis.eval(scripts_.complete, {keys_.state(id)},
                 {std::string(field), std::string(token), succeeded ? "succeeded" : "failed",
                  std::to_string(nowMs() + retry_delay.count()), std::to_string(max_attempts)}));
}

redis::Result<Transition> InvocationStore::release(redis::Connection& redis, std::string_view id,
                                                   std::string_view field, std::string_view token) {
  return transitionOf(
      redis.eval(scripts_.release, {keys_.state(id)}, {std::string(field), std::string(token)}));
}

redis::Result<Transition> InvocationStore::writeDlq(redis::Connection& redis, std::string_view id,
                                                    std::string_view field, const DlqEntry& entry) {
  std::vector<std::string> args = {std::string(field)};
  for (auto& [name, value] : entry.fields()) {
    args.push_back(std::move(name));
    args.push_back(std::move(value));
  }
  return transitionOf(redis.eval(scripts_.write_dlq, {keys_.state(id), keys_.dlq()}, args));
}

redis::Result<bool> InvocationStore::ackAndRetain(redis::Connection& redis, std::string_view id,
                                                  std::chrono::milliseconds retention) {
  auto reply = redis.eval(scripts_.ack_and_retain, {keys_.stream, keys_.state(id)},
                          {keys_.group, std::string(id), std::to_string(retention.count())});
  if (!reply.ok()) return reply.error();
  const auto acked = reply->integer();
  if (!acked.ok()) return protocol("ack_and_retain: " + acked.error().message);
  return *acked > 0;
}

}  // namespace relay::invocation
