#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace relay::app {

/// One problem in a template, located by 1-based line and column.
struct Diagnostic {
  std::filesystem::path file;
  int line = 1;
  int column = 1;
  std::string message;

  /// `path/to/template.yaml:LINE:COL: message`, the form editors and `relay validate` use.
  std::string toString() const;
};

/// Orders diagnostics by position, keeping the order of discovery for equal positions, so the
/// output is deterministic.
void sortDiagnostics(std::vector<Diagnostic>& diagnostics);

}  // namespace relay::app
