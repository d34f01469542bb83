#include "app/names.h"

#include "runtime/handler_resolver.h"

namespace relay::app {
namespace {

bool isLowerOrDigit(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

}  // namespace

bool isValidName(std::string_view name) {
  if (name.empty() || name.size() > 63 || !isLowerOrDigit(name.front())) return false;
  for (const char c : name) {
    if (!isLowerOrDigit(c) && c != '_' && c != '-') return false;
  }
  return true;
}

bool isValidEnvName(std::string_view name) { return runtime::isIdentifier(name); }

}  // namespace relay::app
