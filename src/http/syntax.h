#pragma once

#include <string_view>

namespace relay::http {

/// A `tchar` of RFC 9110 section 5.6.2: what method names and header names are made of.
inline bool isTokenChar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

/// `c` with A-Z lowered: header names compare case-insensitively, byte by byte.
inline char lowerAscii(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

/// `text` without the optional whitespace (spaces and tabs, RFC 9110 section 5.6.3) around it.
inline std::string_view trimWhitespace(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

}  // namespace relay::http
