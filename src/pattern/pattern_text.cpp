#include "pattern/pattern_text.h"

#include "pattern/compiler.h"
#include "yaml/core_schema.h"
#include "yaml/document.h"

namespace relay::pattern {

std::variant<std::shared_ptr<const Pattern>, std::vector<std::string>> compileText(
    const std::string& text, const std::string& shown) {
  std::vector<std::string> problems;
  const auto at = [&shown](int line, int column) {
    return shown + ":" + std::to_string(line) + ":" + std::to_string(column) + ": ";
  };
  auto loaded = yaml::loadDocuments(text);
  if (const auto* problem = std::get_if<yaml::TextProblem>(&loaded)) {
    problems.push_back(at(problem->line, problem->column) + problem->message);
    return problems;
  }
  const auto& documents = std::get<std::vector<YAML::Node>>(loaded);
  if (documents.size() > 1) {
    problems.push_back(at(yaml::line(documents[1]), yaml::column(documents[1])) +
                       "a pattern file holds one YAML document; found a second one after "
                       "\"---\"");
    return problems;
  }
  const YAML::Node node = documents.empty() ? YAML::Node() : documents.front();
  if (!yaml::withinNodeBudget(node)) {
    problems.push_back(at(1, 1) + "the pattern expands to more than " +
                       std::to_string(yaml::kMaxNodes) +
                       " YAML nodes (aliases?); refusing to read it");
    return problems;
  }
  CompileResult result = compile(node);
  if (auto* errors = std::get_if<std::vector<CompileError>>(&result)) {
    for (const CompileError& error : *errors) {
      problems.push_back(at(error.line, error.column) +
                         (error.path.empty() ? "" : error.path + ": ") + error.message);
    }
    return problems;
  }
  return std::get<std::shared_ptr<const Pattern>>(std::move(result));
}

}  // namespace relay::pattern
