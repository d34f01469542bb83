#include "app/names.h"

namespace relay::app {
namespace {

bool isLowerOrDigit(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool isLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool isDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

bool isValidName(std::string_view name) {
  if (name.empty() || name.size() > 63 || !isLowerOrDigit(name.front())) return false;
  for (const char c : name) {
    if (!isLowerOrDigit(c) && c != '_' && c != '-') return false;
  }
  return true;
}

bool isValidEnvName(std::string_view name) { return isIdentifier(name); }

bool isIdentifier(std::string_view name, bool allow_dollar) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool letter = isLetter(c) || c == '_' || (allow_dollar && c == '$');
    if (!letter && (i == 0 || !isDigit(c))) return false;
  }
  return true;
}

}  // namespace relay::app
