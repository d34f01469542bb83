#include "app/template_errors.h"

#include "yaml/core_schema.h"

namespace relay::app {

void TemplateErrors::add(int line, int column, std::string message) {
  diagnostics_.push_back({file_, line, column, std::move(message)});
}

void TemplateErrors::add(const YAML::Node& at, std::string message) {
  add(yaml::line(at), yaml::column(at), std::move(message));
}

std::vector<Diagnostic> TemplateErrors::take() {
  sortDiagnostics(diagnostics_);
  return std::move(diagnostics_);
}

const YAML::Node& Field::at() const {
  if (key && value.IsNull()) return *key;
  return value;
}

}  // namespace relay::app
