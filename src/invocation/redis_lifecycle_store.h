#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "invocation/keys.h"
#include "invocation/lifecycle_scripts.h"
#include "invocation/lifecycle_store.h"
#include "redis/connection.h"
#include "redis/endpoint.h"
#include "redis/group_commit.h"
#include "redis/reconnect.h"

namespace relay::invocation {

/// Settings of one RedisLifecycleStore; the retry policy is a fixed internal.
struct RedisStoreSettings {
  StreamKeys keys;
  std::string consumer;  // who renews (XCLAIM ... JUSTID) and is named in DLQ entries
  std::chrono::milliseconds retention{std::chrono::hours(24 * 7)};  // 0: keep forever
  redis::ConnectionSettings connection;
  /// A call that fails on the transport (I/O, timeout, closed) is repeated on a new connection
  /// this many times, waiting `retry_wait` (doubling) between tries: every verb is idempotent
  /// for its token, so a reply lost to a failover or a killed connection costs nothing.
  int retries = 4;
  std::chrono::milliseconds retry_wait{100};
  /// How long a key slot freed for a waiter stays promised to it (docs/pipeline.md "Flow
  /// control"): as long as the due poller's own lease on a message it took.
  std::chrono::milliseconds key_promise{30'000};
  /// Where the calls go first when set: one pipeline with the calls of every other store
  /// sharing it (a worker's pool threads), one round trip for all (docs/pipeline.md "Group
  /// commit"). A call it cannot answer (transport, NOSCRIPT, failover) runs again alone on the
  /// store's own connection, closed again once it answered; settle() always uses that
  /// connection. Null: every call on the store's own connection.
  std::shared_ptr<redis::GroupCommit> group;
};

/// The LifecycleStore over Redis: each verb is one Lua script (lifecycle_scripts.h), sent through
/// the settings' group commit when there is one, else (and when the group could not answer) on
/// one connection that this object owns and re-creates after a transport error. Not
/// thread-safe: one instance per thread (instances may share a group).
class RedisLifecycleStore final : public LifecycleStore {
 public:
  RedisLifecycleStore(RedisStoreSettings settings, redis::Endpoint endpoint, Clock& clock);
  ~RedisLifecycleStore() override;

  Result<StartVerdict> start(std::string_view id, const StartRequest& request) override;
  Result<BeginVerdict> begin(std::string_view id, std::string_view field,
                             std::string_view token) override;
  Status heartbeat(const ClaimTimes& times) override;
  Result<CompleteVerdict> complete(std::string_view id, std::string_view field,
                                   std::string_view token, const AttemptResult& result,
                                   const DlqEntry* dlq, const AttemptRecord* finished = nullptr,
                                   const FlowControl* flow = nullptr) override;
  Result<ReleaseVerdict> release(std::string_view id, std::string_view field,
                                 std::string_view token, std::chrono::milliseconds retry_after,
                                 bool unjournal = false,
                                 const FlowControl* flow = nullptr) override;
  Result<RenewVerdict> renew(std::string_view id, std::string_view field, std::string_view token,
                             std::chrono::milliseconds extend,
                             const FlowControl* flow = nullptr) override;
  Result<DlqVerdict> writeDlq(std::string_view id, std::string_view field,
                              const DlqEntry& entry) override;
  Result<AckVerdict> acknowledge(std::string_view id, bool obsolete_occurrence = false) override;
  Status clearMissing(std::string_view id) override;
  Result<CancelVerdict> cancel(std::string_view id, const CancelRequest& request) override;
  Status journal(std::string_view id, const AttemptRecord& record) override;
  /// One pipeline (one round trip): one *acknowledge* call for every message it acknowledges,
  /// one *write_dlq* call per DLQ entry.
  std::vector<Result<SettleVerdict>> settle(const std::vector<SettleRequest>& requests) override;

  const RedisStoreSettings& settings() const { return settings_; }

 private:
  /// Runs `script` through the group when there is one, else (and when the group could not
  /// answer: transport, NOSCRIPT, failover) through evalAlone().
  redis::Result<redis::Reply> eval(const redis::Script& script,
                                   const std::vector<std::string>& keys,
                                   const std::vector<std::string>& args);
  /// Runs `script` on this store's own connection, reconnecting and repeating it after a
  /// transport error.
  redis::Result<redis::Reply> evalAlone(const redis::Script& script,
                                        const std::vector<std::string>& keys,
                                        const std::vector<std::string>& args);

  /// Messages to acknowledge in one *acknowledge* call: id and obsolete-occurrence.
  using AckBatch = std::vector<std::pair<std::string_view, bool>>;
  std::vector<std::string> ackKeys(const AckBatch& batch) const;
  std::vector<std::string> ackArgs(const AckBatch& batch) const;
  /// One *acknowledge* call for `batch` through eval(): one verdict per message.
  std::vector<Result<AckVerdict>> acknowledgeAll(const AckBatch& batch);
  std::vector<std::string> dlqKeys(std::string_view id) const;
  std::vector<std::string> dlqArgs(std::string_view id, std::string_view field,
                                   const DlqEntry& entry) const;

  RedisStoreSettings settings_;
  redis::Endpoint endpoint_;
  Clock& clock_;
  const LifecycleScripts& scripts_ = LifecycleScripts::shared();
  std::unique_ptr<redis::Connection> connection_;
};

}  // namespace relay::invocation
