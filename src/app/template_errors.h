#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "app/diagnostic.h"

namespace relay::app {

/// Collects every problem found in one template file; nothing stops at the first.
class TemplateErrors {
 public:
  explicit TemplateErrors(std::filesystem::path file) : file_(std::move(file)) {}

  void add(int line, int column, std::string message);
  /// At the node's position.
  void add(const YAML::Node& at, std::string message);

  bool empty() const { return diagnostics_.empty(); }
  std::size_t size() const { return diagnostics_.size(); }
  const std::filesystem::path& file() const { return file_; }
  /// The diagnostics in position order.
  std::vector<Diagnostic> take();

 private:
  std::filesystem::path file_;
  std::vector<Diagnostic> diagnostics_;
};

/// A value in the template together with its key and its dotted path (`events[0].timeout`).
/// The key is kept because yaml-cpp marks an empty value at the start of the NEXT token, so
/// errors about a null value point at the key instead.
struct Field {
  std::string path;
  YAML::Node value;
  std::optional<YAML::Node> key;  // none for list elements and the document root

  /// Where to report a problem with the value.
  const YAML::Node& at() const;
};

}  // namespace relay::app
