#pragma once

#include <nlohmann/json.hpp>

#include "stream/pending_reason.h"

namespace relay::stream {

/// One explained pending message as JSON, the one shape of `relay pending ls --json`, `relay
/// health --json`, the worker's /status and the console's overview: `id`, `consumer`, `idle_ms`,
/// `deliveries`, `age_ms`, `parked`, `owner_alive`, `due_at_ms` (or null), `payload_exists`
/// (when read), `plan` (`<app>/<handler>` each), `reason` (`kind`, `app`, `handler`,
/// `attempt`, `until_ms`, `detail`) and `description` (describe()).
nlohmann::ordered_json pendingJson(const PendingReport& report);

}  // namespace relay::stream
