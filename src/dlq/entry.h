#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "invocation/dlq_entry.h"
#include "invocation/message.h"

namespace relay::dlq {

/// The entry's kind: the one vocabulary, written by the lifecycle (invocation/dlq_entry.h).
using invocation::DlqKind;
using invocation::kindName;
using invocation::parseKind;

/// A dead-letter entry read back (docs/pipeline.md "Dead-letter entries"), parsed once for every
/// reader: the filters, the replay, `relay dlq` and the console. Lenient, so that an entry of an
/// older Relay or one written by hand still reads: a missing field reads as "", a count that is
/// not a number as what it starts with (leadingWholeNumber), and a kind is judged as from()
/// says. The record itself is kept: every field as written, in order, for inspection.
struct Entry {
  invocation::Message record;
  /// What from() judged the entry to be (replayable() says which can be replayed).
  DlqKind kind = DlqKind::kMalformed;
  /// Real executions of the handler, from `handler_attempts`.
  long long handler_attempts = 0;

  /// Parses `record`. The kind is the recorded `kind`, except that a `handler` entry must also
  /// name an app and a handler (not `-`) and an unknown kind (a newer Relay's) is kMalformed.
  /// An entry written before Relay recorded `kind` is judged by its structure, never by its
  /// reason text: a handler entry names an app and a handler and counts at least one handler
  /// attempt; anything else is kMalformed.
  static Entry from(invocation::Message record);

  /// The entry's own id (its milliseconds: when it was dead-lettered).
  const std::string& id() const { return record.id; }
  std::string_view app() const { return record.valueOf("app"); }
  std::string_view handler() const { return record.valueOf("handler"); }
  std::string_view reason() const { return record.valueOf("reason"); }
  /// The event as recorded (a summary for an oversized one).
  std::string_view event() const { return record.valueOf("event"); }
  std::string_view originalId() const { return record.valueOf("original_id"); }
  std::string_view timestamp() const { return record.valueOf("timestamp"); }
  /// The last attempt's output tail, or null when none was recorded.
  const std::string* outputTail() const { return record.find("output_tail"); }

  /// Whether the entry names an app and a handler (neither empty nor `-`).
  bool namesHandler() const;

  /// Whether there is a handler to run again: a kHandler entry; a kOperator entry that names a
  /// handler (an invocation an operator dead-lettered); a kSchedule entry that names a handler
  /// (its schedule was known when the occurrence was set apart: docs/schedules.md "Rolling
  /// deploys and cron edits") whose recorded event is a JSON object.
  bool replayable() const;
  /// Why the entry cannot be replayed whatever the apps are (it never reached a handler and
  /// names none it could reach, or it was read cut: docs/operations.md "Memory"), in one line
  /// for people; nullopt for a replayable() entry.
  std::optional<std::string> refusal() const;
};

}  // namespace relay::dlq
