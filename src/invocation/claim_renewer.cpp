#include "invocation/claim_renewer.h"

#include <algorithm>
#include <vector>

namespace relay::invocation {

ClaimRenewer::ClaimRenewer(RenewerSettings settings, LifecycleStore& store,
                           observability::Metrics& metrics, observability::Logger& logger,
                           Clock& clock)
    : settings_(settings), store_(store), metrics_(metrics), logger_(logger), clock_(clock) {}

ClaimRenewer::Tracked::~Tracked() {
  if (renewer_) renewer_->untrack(key_);
}

void ClaimRenewer::Tracked::renewUntil(MonoTime until) {
  if (renewer_) renewer_->renewUntil(key_, until);
}

void ClaimRenewer::renewUntil(std::uint64_t key, MonoTime until) {
  std::lock_guard lock(mutex_);
  if (auto found = claims_.find(key); found != claims_.end()) found->second.until = until;
}

ClaimRenewer::Tracked ClaimRenewer::track(Claim claim) {
  std::lock_guard lock(mutex_);
  const std::uint64_t key = next_key_++;
  claims_.emplace(key, std::move(claim));
  return Tracked(this, key);
}

void ClaimRenewer::untrack(std::uint64_t key) {
  std::lock_guard lock(mutex_);
  claims_.erase(key);
}

std::size_t ClaimRenewer::tracked() const {
  std::lock_guard lock(mutex_);
  return claims_.size();
}

void ClaimRenewer::retryLater(std::string what, std::function<bool(LifecycleStore&)> call,
                              std::optional<Tracked> claim) {
  std::shared_ptr<Tracked> kept;
  if (claim) {
    // Renewed for as long as the call is owed, whatever the handler's timeout said.
    claim->renewUntil(MonoTime::max());
    kept = std::make_shared<Tracked>(std::move(*claim));
  }
  std::lock_guard lock(mutex_);
  owed_.push_back({std::move(what), std::move(call), std::move(kept)});
}

std::size_t ClaimRenewer::settleOwed(std::chrono::milliseconds patience) {
  const MonoTime until = clock_.monotonicNow() + patience;
  while (owed() > 0) {
    renewAll();
    if (owed() == 0 || clock_.monotonicNow() >= until) break;
    clock_.sleepFor(std::min<std::chrono::milliseconds>(
        settings_.interval,
        std::chrono::duration_cast<std::chrono::milliseconds>(until - clock_.monotonicNow())));
  }
  const std::size_t left = owed();
  if (left > 0) {
    logger_.error(
        "stopping with lifecycle calls still owed: their claims expire and count as "
        "executed attempts",
        {{"owed", std::to_string(left)}});
  }
  return left;
}

std::size_t ClaimRenewer::owed() const {
  std::lock_guard lock(mutex_);
  return owed_.size();
}

void ClaimRenewer::renewAll() {
  std::vector<std::pair<std::uint64_t, Claim>> claims;
  std::list<Owed> owed;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [key, claim] : claims_) claims.emplace_back(key, claim);
    owed.swap(owed_);
  }
  const MonoTime now = clock_.monotonicNow();
  std::lock_guard store_lock(store_mutex_);
  if (auto beat = store_.heartbeat(settings_.claim); !beat.ok()) {
    metrics_.countRedisError("heartbeat");
  }
  for (auto it = owed.begin(); it != owed.end();) {
    if (it->call(store_)) {
      logger_.info("owed lifecycle call done after a lost reply", {{"call", it->what}});
      it = owed.erase(it);
    } else {
      ++it;
    }
  }
  if (!owed.empty()) {
    std::lock_guard lock(mutex_);
    owed_.splice(owed_.begin(), owed);
  }
  for (const auto& [key, claim] : claims) {
    // As long as the timeout allows: a handler past it is being killed by its runtime.
    const auto left =
        claim.until == MonoTime::max()
            ? settings_.claim.lease
            : std::chrono::duration_cast<std::chrono::milliseconds>(claim.until - now);
    if (left.count() <= 0) continue;
    const auto extend = std::min(left, settings_.claim.lease) + settings_.claim.margin;
    auto renewed = store_.renew(claim.id, claim.field, claim.token, extend, &claim.flow);
    if (!renewed.ok()) {
      metrics_.countRedisError("renew");
      logger_.warn("claim renewal failed", {{"message_id", claim.id},
                                            {"invocation", claim.field},
                                            {"error", renewed.error().message}});
    } else if (*renewed != RenewVerdict::kRenewed && stillTracked(key)) {
      // A claim whose handler just finished is no longer held by its token: not an error.
      logger_.error("claim of a running handler was lost",
                    {{"message_id", claim.id}, {"invocation", claim.field}});
    }
  }
}

bool ClaimRenewer::stillTracked(std::uint64_t key) const {
  std::lock_guard lock(mutex_);
  return claims_.count(key) > 0;
}

std::size_t ClaimRenewer::releaseAll() {
  std::vector<Claim> claims;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [key, claim] : claims_) claims.push_back(claim);
  }
  const MonoTime now = clock_.monotonicNow();
  std::lock_guard store_lock(store_mutex_);
  std::size_t released = 0;
  for (const Claim& claim : claims) {
    // A finished handler whose outcome is owed ran: its claim is not given back.
    if (claim.until == MonoTime::max()) continue;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(claim.until - now);
    auto done = store_.release(claim.id, claim.field, claim.token,
                               std::max(left, std::chrono::milliseconds(0)), false, &claim.flow);
    if (done.ok() && *done == ReleaseVerdict::kReleased) ++released;
    if (!done.ok()) metrics_.countRedisError("release");
  }
  return released;
}

void ClaimRenewer::run() {
  while (!stopping_.sleepFor(clock_, settings_.interval)) renewAll();
}

void ClaimRenewer::stop() { stopping_.request(); }

}  // namespace relay::invocation
