#pragma once

#include <optional>
#include <string_view>

#include "stream/stream_entry.h"

namespace relay::dlq {

/// Why a dead-letter entry exists (docs/pipeline.md "Dead-letter entries"). Only kHandler
/// entries name a handler that ran; the others never reached one and cannot be replayed.
enum class DlqKind { kHandler, kMalformed, kOversized, kSchedule };

/// `handler`, `malformed`, `oversized`, `schedule`: the values of the entry's `kind` field.
std::string_view kindName(DlqKind kind);
std::optional<DlqKind> parseKind(std::string_view name);

/// The kind an entry records; a `handler` entry must also name an app and a handler (not `-`).
/// An entry written before Relay recorded `kind` is judged by its structure, never by its
/// reason text: a handler entry names an app and a handler and counts at least one handler
/// attempt; anything else is taken as kMalformed.
DlqKind kindOf(const stream::StreamEntry& entry);

}  // namespace relay::dlq
