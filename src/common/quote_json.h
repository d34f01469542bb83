#pragma once

#include <string>
#include <string_view>

namespace relay {

/// `text` as a double-quoted string literal that JSON and YAML both read back as `text`:
/// `\"`, `\\`, `\n`, `\t`, and `\u00XX` for every other C0 control character and for DEL;
/// every other byte (UTF-8 included) as it is. The one quoter of rendered events, explanation
/// paths and rendered patterns (which must parse again as the same pattern YAML).
std::string quoteJson(std::string_view text);

}  // namespace relay
