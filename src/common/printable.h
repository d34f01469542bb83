#pragma once

#include <string>
#include <string_view>

namespace relay {

/// Which whitespace control characters printable() keeps as they are.
enum class KeepControls { kNone, kTab, kTabAndNewline };

/// `text` safe for a terminal and for a line-oriented log: every control character (C0 except
/// those `keep` names, DEL, the C1 controls U+0080..U+009F, which some terminals obey, the
/// bidirectional controls U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069, and the line
/// and paragraph separators U+2028, U+2029) and every byte that is not part of valid UTF-8
/// becomes `\xNN` per byte; valid UTF-8 text stays as it is.
/// A handler printing "\r[other/app] forged" or an ANSI sequence cannot forge or hide a log
/// line's prefix through it.
std::string printable(std::string_view text, KeepControls keep = KeepControls::kNone);

}  // namespace relay
