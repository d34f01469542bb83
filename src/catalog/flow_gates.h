#pragma once

#include <string>

#include "app/app.h"
#include "event/event.h"
#include "invocation/flow.h"

namespace relay::catalog {

/// The flow control of one invocation of `rule` of `app` for `event` (docs/apps.md "Flow
/// control"): the app's and the rule's gates, each with the key value the event gives it. An
/// event without its dedupe key is never deduplicated (no dedupe gate).
invocation::FlowControl flowControl(const app::App& app, const app::Rule& rule,
                                    const event::Event& event);

/// The flow control of a schedule occurrence of `app`: only the app's throttle applies (an
/// occurrence has no event fields to key on).
invocation::FlowControl scheduleFlowControl(const app::App& app);

/// The key value `path` names in `event`, as invocation::FlowControl records it
/// (invocation/flow.h): the field's compact JSON, invocation::kMissingKeyValue when the event
/// has no such field, `#<sha1>` of the JSON when longer than invocation::kMaxKeyValueBytes.
std::string flowKeyValue(const event::Event& event, const app::KeyPath& path);

}  // namespace relay::catalog
