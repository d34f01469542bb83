#include "common/printable.h"

#include <cstdio>

namespace relay {
namespace {

// Length of the valid UTF-8 sequence at `i` (1-4), or 0 when it is not one; `code` receives
// its code point.
std::size_t utf8Length(std::string_view text, std::size_t i, unsigned& code) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  std::size_t length = 0;
  unsigned min = 0;
  code = lead;
  if (lead < 0x80) return 1;
  if ((lead & 0xE0) == 0xC0) {
    length = 2, min = 0x80, code = lead & 0x1F;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, min = 0x800, code = lead & 0x0F;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, min = 0x10000, code = lead & 0x07;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(i + k) & 0x3F);
  }
  // Overlong forms, surrogates and code points past U+10FFFF are not UTF-8.
  if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return length;
}

bool kept(unsigned code, KeepControls keep) {
  if (code == '\t') return keep != KeepControls::kNone;
  if (code == '\n') return keep == KeepControls::kTabAndNewline;
  return false;
}

// C0, DEL, C1, and the invisible characters that reorder or break what a terminal shows: the
// Unicode bidirectional controls (ALM, LRM, RLM, embeddings, overrides, isolates: a line could
// be shown reversed, hiding what follows) and the line and paragraph separators (which some
// viewers break a line at).
bool isControl(unsigned code) {
  return code < 0x20 || (code >= 0x7F && code <= 0x9F) || code == 0x061C || code == 0x200E ||
         code == 0x200F || (code >= 0x2028 && code <= 0x202E) || (code >= 0x2066 && code <= 0x2069);
}

void appendEscaped(std::string& out, std::string_view bytes) {
  for (const char c : bytes) {
    char escaped[8];
    std::snprintf(escaped, sizeof escaped, "\\x%02X", static_cast<unsigned char>(c));
    out += escaped;
  }
}

}  // namespace

std::string printable(std::string_view text, KeepControls keep) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    unsigned code = 0;
    const std::size_t length = utf8Length(text, i, code);
    if (length == 0) {
      appendEscaped(out, text.substr(i, 1));
      ++i;
      continue;
    }
    if (isControl(code) && !kept(code, keep)) {
      appendEscaped(out, text.substr(i, length));
    } else {
      out.append(text.substr(i, length));
    }
    i += length;
  }
  return out;
}

}  // namespace relay
