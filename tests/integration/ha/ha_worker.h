#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/system_clock.h"
#include "http/client.h"
#include "integration/ha/ha_apps.h"
#include "support/prometheus_text.h"
#include "support/spawned_process.h"
#include "support/worker_log.h"

namespace relay::testing {

/// A `relay_test_worker` process (the real Worker, configured like `relay start`, with the
/// short reclaim of tests/support/test_worker_main.cpp) on the stream {events} of `uri`, running
/// `apps` on the process runtime, its log in `logs`/`name`.log. SIGKILLed by the destructor.
class HaWorker {
 public:
  HaWorker(const std::string& uri, const HaApps& apps, const std::string& name,
           const std::filesystem::path& logs, const std::vector<std::string>& extra_env = {}) {
    std::vector<std::string> env = apps.env(uri, name);
    env.insert(env.end(), extra_env.begin(), extra_env.end());
    process_ = std::make_unique<SpawnedProcess>(std::vector<std::string>{RELAY_TEST_WORKER}, env,
                                                (logs / (name + ".log")).string());
  }

  /// Waits for the "relay started" line and reads the HTTP address from it.
  bool started() {
    if (!process_->waitForLog("relay started")) return false;
    http_ = httpAddressInLog(process_->log());
    return http_.port != 0;
  }

  /// One sample of its /metrics; -1 when it cannot be read.
  double metric(const std::string& name) {
    auto response = http::get(http_, "/metrics", std::chrono::seconds(2), clock_);
    if (!response.ok() || response->status != 200) return -1;
    const PrometheusText metrics(response->body);
    return metrics.value(name).value_or(-1);
  }

  std::string log() const { return process_->log(); }

 private:
  std::unique_ptr<SpawnedProcess> process_;
  http::Address http_;
  SystemClock clock_;
};

}  // namespace relay::testing
