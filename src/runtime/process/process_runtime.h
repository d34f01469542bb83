#pragma once

#include <string>

#include "common/clock.h"
#include "runtime/runtime.h"

namespace relay::runtime {

/// Runs handlers as plain child processes with no isolation: development only.
class ProcessRuntime final : public Runtime {
 public:
  /// `search_path` is where python3 and node are looked up.
  explicit ProcessRuntime(Clock& clock, std::string search_path = "/usr/local/bin:/usr/bin:/bin");

  std::string_view name() const override { return "process"; }
  Result<Outcome> run(const InvocationSpec& spec, OutputSink& output) override;
  Availability availability(const InvocationSpec& app_spec) const override;

 private:
  Clock& clock_;
  std::string search_path_;
};

}  // namespace relay::runtime
