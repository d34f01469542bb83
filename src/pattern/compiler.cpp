#include "pattern/compiler.h"

#include <yaml-cpp/yaml.h>

#include <optional>
#include <set>
#include <string>
#include <utility>

#include "event/event.h"
#include "pattern/literals.h"
#include "pattern/now_expression.h"
#include "pattern/operator_names.h"
#include "pattern/pattern.h"
#include "yaml/core_schema.h"

namespace relay::pattern {
namespace {

constexpr std::string_view kOperatorList = "prefix, suffix, exists, gt, gte, lt, lte";

std::string join(const std::string& parent, const std::string& name) {
  return parent.empty() ? name : parent + "." + name;
}

std::string indexed(const std::string& path, std::size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

// A short rendering of a scalar for messages: its text as written.
std::string shown(const YAML::Node& node) {
  if (node.IsNull()) return "null";
  if (node.IsScalar()) return node.Scalar();
  return node.IsSequence() ? "a list" : "a map";
}

const char* shape(const YAML::Node& node) {
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a map";
  if (node.IsNull()) return "null";
  return "a scalar";
}

/// Walks the YAML tree, building the pattern and collecting every error instead of stopping
/// at the first, so one `relay validate` run shows all of them.
class Compiler {
 public:
  std::vector<CompileError> takeErrors() { return std::move(errors_); }

  std::optional<std::vector<Field>> compileTop(const YAML::Node& node) {
    if (!node.IsDefined() || node.IsNull()) {
      error("", node, "the pattern is missing or null; it must be a map of field conditions");
      return std::nullopt;
    }
    if (!node.IsMap()) {
      error("", node,
            std::string("the pattern must be a map of field conditions, not ") + shape(node));
      return std::nullopt;
    }
    if (node.size() == 0) {
      error("", node, "the pattern is empty; it needs at least one field condition");
      return std::nullopt;
    }
    return compileFields(node, "");
  }

 private:
  void error(const std::string& path, const YAML::Node& at, std::string message) {
    const YAML::Mark mark = at.IsDefined() ? at.Mark() : YAML::Mark::null_mark();
    errors_.push_back({path, mark.line >= 0 ? mark.line + 1 : 0,
                       mark.column >= 0 ? mark.column + 1 : 0, std::move(message)});
  }

  // A map whose keys are field names (the pattern's top level or a nested map).
  std::optional<std::vector<Field>> compileFields(const YAML::Node& map,
                                                  const std::string& parent) {
    if (depth_ >= event::kMaxDepth) {
      error(parent, map,
            "nested deeper than " + std::to_string(event::kMaxDepth) +
                " levels, which no event can be (events nest at most that deep)");
      return std::nullopt;
    }
    const DepthGuard guard(depth_);
    std::vector<Field> fields;
    std::set<std::string> seen;
    bool ok = true;
    for (auto it = map.begin(); it != map.end(); ++it) {
      const YAML::Node key = it->first;
      const YAML::Node value = it->second;
      if (!key.IsScalar()) {
        error(parent, key, std::string("a field name must be a string, not ") + shape(key));
        ok = false;
        continue;
      }
      const std::string& name = key.Scalar();
      const std::string path = join(parent, name);
      if (!isValidUtf8(name)) {
        error(parent, key, "a field name must be valid UTF-8, as every event key is");
        ok = false;
        continue;
      }
      if (!seen.insert(name).second) {
        error(path, key, "duplicate field \"" + name + "\"");
        ok = false;
        continue;
      }
      if (operatorNamed(name)) {
        error(path, key,
              "\"" + name + "\" is an operator and cannot be used as a field name; an operator " +
                  "is a one-key map inside a field's list: field: [{" + name + ": ...}]");
        ok = false;
        continue;
      }
      std::optional<std::vector<Alternative>> alternatives =
          compileCondition(value, key, name, parent, path);
      if (!alternatives) {
        ok = false;
        continue;
      }
      fields.push_back({name, std::move(*alternatives)});
    }
    if (!ok) return std::nullopt;
    return fields;
  }

  // The value of one field: a list of alternatives, or a map as a one-element list.
  std::optional<std::vector<Alternative>> compileCondition(const YAML::Node& value,
                                                           const YAML::Node& key,
                                                           const std::string& name,
                                                           const std::string& parent,
                                                           const std::string& path) {
    if (value.IsNull()) {
      error(path, key,
            "the condition of \"" + name + "\" is null; write a list of alternatives: " + name +
                ": [value]");
      return std::nullopt;
    }
    if (value.IsScalar()) {
      if (const std::optional<std::string> hint = misspelledOperatorHint(name)) {
        error(parent.empty() ? path : parent, key,
              "unknown operator \"" + name + "\" (" + *hint + "); operators are " +
                  std::string(kOperatorList));
        return std::nullopt;
      }
      error(path, value,
            "a field condition must be a list of alternatives, not a scalar: write " + name +
                ": [" + value.Scalar() + "]");
      return std::nullopt;
    }
    if (value.IsSequence()) {
      if (value.size() == 0) {
        error(path, value, "empty list: a field condition needs at least one alternative");
        return std::nullopt;
      }
      std::vector<Alternative> alternatives;
      bool ok = true;
      for (std::size_t i = 0; i < value.size(); ++i) {
        std::optional<Alternative> alternative = compileAlternative(value[i], indexed(path, i));
        if (alternative) {
          alternatives.push_back(std::move(*alternative));
        } else {
          ok = false;
        }
      }
      if (!ok) return std::nullopt;
      return alternatives;
    }
    // A bare map is shorthand for a one-element list.
    std::optional<Alternative> alternative = compileAlternative(value, path);
    if (!alternative) return std::nullopt;
    std::vector<Alternative> alternatives;
    alternatives.push_back(std::move(*alternative));
    return alternatives;
  }

  std::optional<Alternative> compileAlternative(const YAML::Node& node, const std::string& path) {
    if (node.IsNull() || node.IsScalar()) {
      Result<Literal> literal = literalOf(node);
      if (!literal) {
        error(path, node, literal.error().message);
        return std::nullopt;
      }
      return Alternative(std::move(literal).value());
    }
    if (node.IsSequence()) {
      error(path, node,
            "a list inside a list is not an alternative; an alternative is a scalar, a "
            "one-operator map or a map of nested fields");
      return std::nullopt;
    }
    if (node.size() == 0) {
      error(path, node, "empty map: a nested map needs at least one field condition");
      return std::nullopt;
    }
    // A map holding an operator key is an operator map, which holds exactly that one key.
    std::vector<std::string> operators;
    std::vector<std::string> fields;
    for (auto it = node.begin(); it != node.end(); ++it) {
      const std::string name = it->first.IsScalar() ? it->first.Scalar() : std::string();
      (operatorNamed(name) ? operators : fields).push_back(name);
    }
    if (operators.size() > 1) {
      error(path, node,
            "only one operator per map, found \"" + operators[0] + "\" and \"" + operators[1] +
                "\"; write them as separate alternatives (a list is OR)");
      return std::nullopt;
    }
    if (operators.size() == 1 && !fields.empty()) {
      error(path, node,
            "operator \"" + operators[0] + "\" cannot share a map with field \"" + fields[0] +
                "\"; an operator map holds exactly one operator");
      return std::nullopt;
    }
    if (operators.size() == 1) {
      const auto it = node.begin();
      return compileOperator(*operatorNamed(operators[0]), it->first, it->second, path);
    }
    std::optional<std::vector<Field>> nested = compileFields(node, path);
    if (!nested) return std::nullopt;
    return Alternative(Nested{std::move(*nested)});
  }

  std::optional<Alternative> compileOperator(OperatorName op, const YAML::Node& key,
                                             const YAML::Node& operand, const std::string& path) {
    const std::string name(operatorSpelling(op));
    if (!operand.IsNull() && !operand.IsScalar()) {
      const std::string what = op == OperatorName::kExists ? "true or false"
                               : (op == OperatorName::kPrefix || op == OperatorName::kSuffix)
                                   ? "string"
                                   : "number or now()-relative string";
      error(path, operand,
            name + " takes a single " + what + ", not " + shape(operand) +
                (operand.IsSequence() ? "; several operands are separate alternatives" : "") +
                " (operator names cannot be used as field names)");
      return std::nullopt;
    }
    Result<Literal> typed = literalOf(operand);
    if (!typed) {
      error(path, operand, typed.error().message);
      return std::nullopt;
    }
    const Literal& literal = *typed;
    const YAML::Node& at = operand.IsNull() ? key : operand;
    switch (op) {
      case OperatorName::kPrefix:
      case OperatorName::kSuffix:
        if (literal.kind != Literal::Kind::kString) {
          error(path, at,
                name + " takes a string, got " + describeLiteral(literal) +
                    (literal.kind == Literal::Kind::kNull
                         ? ""
                         : "; quote it to match text: \"" + shown(operand) + "\""));
          return std::nullopt;
        }
        if (op == OperatorName::kPrefix) return Alternative(Prefix{literal.string});
        return Alternative(Suffix{literal.string});
      case OperatorName::kExists:
        if (literal.kind != Literal::Kind::kBool) {
          error(path, at, "exists takes true or false (unquoted), got " + describeLiteral(literal));
          return std::nullopt;
        }
        return Alternative(Exists{literal.boolean});
      case OperatorName::kGt:
      case OperatorName::kGte:
      case OperatorName::kLt:
      case OperatorName::kLte:
        return compileComparison(op, name, literal, at, path);
    }
    return std::nullopt;
  }

  std::optional<Alternative> compileComparison(OperatorName op, const std::string& name,
                                               const Literal& literal, const YAML::Node& at,
                                               const std::string& path) {
    Comparison comparison;
    comparison.op = op == OperatorName::kGt    ? Comparison::Op::kGt
                    : op == OperatorName::kGte ? Comparison::Op::kGte
                    : op == OperatorName::kLt  ? Comparison::Op::kLt
                                               : Comparison::Op::kLte;
    if (literal.kind == Literal::Kind::kNumber) {
      comparison.number = literal.number;
      return Alternative(comparison);
    }
    if (literal.kind != Literal::Kind::kString) {
      error(path, at,
            name + " takes a number or a now()-relative string such as \"now()-5m\", got " +
                describeLiteral(literal));
      return std::nullopt;
    }
    if (yaml::plainNumberValue(literal.string).ok()) {
      error(path, at,
            name + " takes a number unquoted: write " + name + ": " + literal.string +
                " (a quoted operand must be a now()-relative string)");
      return std::nullopt;
    }
    Result<std::chrono::milliseconds> offset = parseNowExpression(literal.string);
    if (!offset) {
      error(path, at, name + ": " + offset.error().message);
      return std::nullopt;
    }
    comparison.temporal = true;
    comparison.offset = *offset;
    return Alternative(comparison);
  }

  // Counts the nesting of field maps while one is being compiled.
  struct DepthGuard {
    explicit DepthGuard(int& depth) : depth_(depth) { ++depth_; }
    ~DepthGuard() { --depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;
    int& depth_;
  };

  std::vector<CompileError> errors_;
  int depth_ = 0;
};

}  // namespace

CompileResult compile(const YAML::Node& node) {
  try {
    Compiler compiler;
    std::optional<std::vector<Field>> fields = compiler.compileTop(node);
    if (!fields) return compiler.takeErrors();
    return std::make_shared<const Pattern>(std::move(*fields));
  } catch (const std::exception& exception) {
    // yaml-cpp throws on invalid node access; compile() promises never to throw.
    return std::vector<CompileError>{
        {"", 0, 0, std::string("cannot read the pattern: ") + exception.what()}};
  }
}

}  // namespace relay::pattern
