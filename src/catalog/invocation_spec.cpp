#include "catalog/invocation_spec.h"

namespace relay::catalog {

runtime::InvocationSpec invocationSpec(const app::App& app, std::string_view handler,
                                       std::chrono::milliseconds timeout,
                                       std::string_view message_id, int attempt,
                                       runtime::Trigger trigger, std::string_view input) {
  runtime::InvocationSpec spec;
  spec.app = app.name;
  spec.app_dir = app.dir;
  spec.language = app.runtime;
  spec.handler = std::string(handler);
  // Only a named image: the sandbox runs such an app on the image's root, docker picks its own
  // default for the language otherwise (docs/runtimes.md "Image roots").
  if (app.image_named) spec.image = app.image;
  spec.network = app.network;
  spec.egress = app.egress;
  spec.resources.memory_bytes = app.resources.memory_bytes;
  spec.resources.cpus = app.resources.cpus;
  spec.resources.pids = static_cast<std::uint32_t>(app.resources.pids);
  spec.timeout = timeout;
  spec.app_env = app.env;
  spec.message_id = std::string(message_id);
  spec.attempt = attempt;
  spec.trigger = trigger;
  spec.input = input;
  return spec;
}

runtime::InvocationSpec availabilitySpec(const app::App& app, std::string_view handler) {
  return invocationSpec(app, handler, std::chrono::seconds(30), "", 0, runtime::Trigger::kEvent,
                        "");
}

runtime::Availability runtimeAvailability(const runtime::Runtime& runtime, const app::App& app) {
  const auto check = [&](std::string_view handler) {
    return runtime.availability(availabilitySpec(app, handler));
  };
  runtime::Availability verdict;  // every handler's: the image (if any) is the app's
  for (const app::Rule& rule : app.rules) {
    verdict = check(rule.handler);
    if (!verdict.available) return verdict;
  }
  for (const app::Schedule& schedule : app.schedules) {
    verdict = check(schedule.handler);
    if (!verdict.available) return verdict;
  }
  return verdict;
}

}  // namespace relay::catalog
