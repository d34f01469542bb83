#pragma once

#include <optional>
#include <string>

#include "app/snapshot.h"
#include "http/server.h"
#include "worker/housekeeper.h"

namespace relay::worker {

/// Prometheus text format, version 0.0.4: what /metrics is served as.
inline constexpr const char* kPrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";

/// /healthz: 200 while Redis answered the consumer's last read, else 503 naming `redis` (an
/// endpoint description without password) and the problem (unreachable, NOAUTH, READONLY,
/// LOADING, MASTERDOWN, CLUSTERDOWN: redis::unhealthyReason).
http::HttpReply healthReply(const std::optional<std::string>& redis_problem,
                            const std::string& redis);

/// /readyz: 200 when the consumer group exists and at least one app is loaded (a worker with no
/// rules would acknowledge every event as unmatched), else 503 with every reason; 503 as well
/// while the worker is stopping.
http::HttpReply readinessReply(const GroupState& group, const app::Snapshot& apps, bool stopping);

}  // namespace relay::worker
