#pragma once

#include <optional>
#include <string>

#include "app/snapshot.h"
#include "http/server.h"
#include "worker/housekeeper.h"

namespace relay::worker {

/// Prometheus text format, version 0.0.4: what /metrics is served as.
inline constexpr const char* kPrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";

/// /healthz: 200 while Redis answered the consumer's last read and the lifecycle's store calls
/// are not failing, else 503 naming `redis` (an endpoint description without password) and
/// every problem: the reader's (unreachable, NOAUTH, READONLY, LOADING, MASTERDOWN,
/// CLUSTERDOWN: redis::unhealthyReason), the lifecycle's (invocation::StoreHealth).
http::HttpReply healthReply(const std::optional<std::string>& redis_problem,
                            const std::optional<std::string>& lifecycle_problem,
                            const std::string& redis);

/// /status: the worker's health as JSON, what `relay health` prints (docs/operations.md
/// "`relay health`"): `healthy` and every `problems` of /healthz, the group, and what the
/// housekeeper last learned of the pending messages (`pending`: `count`, `oldest` and
/// `trim_held_back`, each an explained message as stream/pending_json.h shapes it, or null).
http::HttpReply statusReply(const std::optional<std::string>& redis_problem,
                            const std::optional<std::string>& lifecycle_problem,
                            const std::string& redis, const GroupState& group,
                            const StreamHealth& stream);

/// /readyz: 200 when the consumer group exists and at least one app is loaded (a worker with no
/// rules would acknowledge every event as unmatched), else 503 with every reason; 503 as well
/// while the worker is stopping.
http::HttpReply readinessReply(const GroupState& group, const app::Snapshot& apps, bool stopping);

}  // namespace relay::worker
