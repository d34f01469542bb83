#pragma once

#include <istream>
#include <memory>
#include <optional>
#include <string>

#include "cli/command.h"
#include "common/clock.h"
#include "pattern/pattern.h"

namespace relay::cli {

/// Flags of `relay pattern test`.
struct PatternTestOptions {
  std::string pattern;             // a file holding the pattern map, or "-" for stdin
  std::string event;               // JSON text, or @FILE (@- for stdin)
  std::optional<std::string> now;  // RFC 3339; the clock's time when absent
  bool explain = false;            // also print the first failing condition
  bool json = false;               // one JSON object instead of text
};

/// A pattern file's text (one YAML document: the map that goes under `pattern:`) compiled, or
/// null after printing every error as SHOWN:LINE:COL: path: message (the `--filter` of
/// `relay cancel` reads its file with it).
std::shared_ptr<const pattern::Pattern> compilePatternFile(const std::string& text,
                                                           const std::string& shown,
                                                           CommandContext& context);

/// Runs `relay pattern test`: prints "match" (exit 0) or "no match" (exit 1), with --explain
/// also the first failing condition (docs/patterns.md "Why an event does not match"); every
/// pattern error as FILE:LINE:COL: path: message, an invalid event or --now, exit 2. `in` stands
/// for stdin and `clock` gives now() when --now is absent (both injected for tests).
void runPatternTest(const PatternTestOptions& options, std::istream& in, const Clock& clock,
                    CommandContext& context);

}  // namespace relay::cli
