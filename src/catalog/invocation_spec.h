#pragma once

#include <string>
#include <string_view>

#include "app/app.h"
#include "app/registry.h"
#include "runtime/runtime.h"

namespace relay::catalog {

/// The runtime's view of one invocation of `handler` of `app` (the bridge between the app
/// model and the runtime interface: `app` uses the runtime's handler contract, but the runtime
/// knows nothing of apps, so the spec is built here). `input` must outlive
/// the returned spec.
runtime::InvocationSpec invocationSpec(const app::App& app, std::string_view handler,
                                       std::chrono::milliseconds timeout,
                                       std::string_view message_id, int attempt,
                                       runtime::Trigger trigger, std::string_view input);

/// The same for availability checks (no message, no input).
runtime::InvocationSpec availabilitySpec(const app::App& app, std::string_view handler);

/// The runtime's verdict on every handler of `app` (rules and schedules): the registry's
/// AvailabilityCheck for the worker and for the CLI commands that run handlers.
runtime::Availability runtimeAvailability(const runtime::Runtime& runtime, const app::App& app);

}  // namespace relay::catalog
