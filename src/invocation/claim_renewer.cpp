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

void ClaimRenewer::retryLater(std::string what, MonoTime until,
                              std::function<bool(LifecycleStore&)> call) {
  std::lock_guard lock(mutex_);
  owed_.push_back({std::move(what), until, std::move(call)});
}

std::size_t ClaimRenewer::owed() const {
  std::lock_guard lock(mutex_);
  return owed_.size();
}

void ClaimRenewer::renewAll() {
  std::vector<Claim> claims;
  std::list<Owed> owed;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [key, claim] : claims_) claims.push_back(claim);
    owed.swap(owed_);
  }
  const MonoTime now = clock_.monotonicNow();
  std::lock_guard store_lock(store_mutex_);
  for (auto it = owed.begin(); it != owed.end();) {
    if (it->call(store_)) {
      logger_.info("owed lifecycle call done after a lost reply", {{"call", it->what}});
      it = owed.erase(it);
    } else if (now >= it->until) {
      logger_.error("owed lifecycle call given up: its claim has expired", {{"call", it->what}});
      it = owed.erase(it);
    } else {
      ++it;
    }
  }
  if (!owed.empty()) {
    std::lock_guard lock(mutex_);
    owed_.splice(owed_.begin(), owed);
  }
  for (const Claim& claim : claims) {
    // As long as the timeout allows: a handler past it is being killed by its runtime.
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(claim.until - now);
    if (left.count() <= 0) continue;
    const auto extend = std::min(left, settings_.claim.lease) + settings_.claim.margin;
    auto renewed = store_.renew(claim.id, claim.field, claim.token, extend);
    if (!renewed.ok()) {
      metrics_.countRedisError("renew");
      logger_.warn("claim renewal failed", {{"message_id", claim.id},
                                            {"invocation", claim.field},
                                            {"error", renewed.error().message}});
    } else if (*renewed != RenewVerdict::kRenewed) {
      logger_.error("claim of a running handler was lost",
                    {{"message_id", claim.id}, {"invocation", claim.field}});
    }
  }
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
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(claim.until - now);
    auto done = store_.release(claim.id, claim.field, claim.token,
                               std::max(left, std::chrono::milliseconds(0)));
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
