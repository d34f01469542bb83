#pragma once

#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace YAML {
class Node;
}

namespace relay::pattern {

class Pattern;  // compiled, immutable, shareable across threads (pattern/pattern.h)

/// One problem found while compiling a pattern. `path` names the condition inside the pattern
/// (`table_name[0]`, `new_image.created_at[1]`; empty for the pattern itself); line and column
/// are 1-based positions in the YAML source.
struct CompileError {
  std::string path;
  int line = 0;
  int column = 0;
  std::string message;
};

/// Either the compiled pattern or every problem found (never only the first).
using CompileResult = std::variant<std::shared_ptr<const Pattern>, std::vector<CompileError>>;

/// Compiles the YAML node given as a rule's `pattern:` value (docs/patterns.md "Structure").
/// Never throws; never widens: anything doubtful is an error.
CompileResult compile(const YAML::Node& node);

}  // namespace relay::pattern
