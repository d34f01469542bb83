#include "app/diagnostic.h"

#include <algorithm>

namespace relay::app {

std::string Diagnostic::toString() const {
  return file.string() + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + message;
}

void sortDiagnostics(std::vector<Diagnostic>& diagnostics) {
  std::stable_sort(diagnostics.begin(), diagnostics.end(),
                   [](const Diagnostic& a, const Diagnostic& b) {
                     return a.line != b.line ? a.line < b.line : a.column < b.column;
                   });
}

}  // namespace relay::app
