#pragma once

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace relay::testing {

/// A strict reader of the Prometheus text exposition format (0.0.4) for tests: every sample
/// line must parse, every sample's family must have been declared with # TYPE before it, and
/// label values are unescaped. Samples are keyed by name and sorted label pairs.
class PrometheusText {
 public:
  using Labels = std::vector<std::pair<std::string, std::string>>;

  /// Parses `text`; on the first malformed line error() names it and no sample is kept.
  explicit PrometheusText(std::string_view text) { parse(text); }

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

  /// The value of one sample, or nullopt when it is not there.
  std::optional<double> value(const std::string& name, Labels labels = {}) const {
    std::sort(labels.begin(), labels.end());
    const auto found = samples_.find({name, labels});
    if (found == samples_.end()) return std::nullopt;
    return found->second;
  }
  std::size_t size() const { return samples_.size(); }

 private:
  void parse(std::string_view text) {
    std::map<std::string, std::string> types;
    std::size_t line_number = 0;
    while (!text.empty()) {
      ++line_number;
      const std::size_t lf = text.find('\n');
      if (lf == std::string_view::npos) return fail(line_number, "no newline at the end");
      const std::string_view line = text.substr(0, lf);
      text.remove_prefix(lf + 1);
      if (line.empty()) continue;
      if (line.substr(0, 7) == "# TYPE ") {
        const std::string_view rest = line.substr(7);
        const std::size_t space = rest.find(' ');
        if (space == std::string_view::npos) return fail(line_number, "TYPE without a type");
        types[std::string(rest.substr(0, space))] = std::string(rest.substr(space + 1));
        continue;
      }
      if (line.front() == '#') continue;
      std::size_t i = 0;
      while (i < line.size() && (std::isalnum(static_cast<unsigned char>(line[i])) ||
                                 line[i] == '_' || line[i] == ':')) {
        ++i;
      }
      const std::string name(line.substr(0, i));
      if (name.empty()) return fail(line_number, "no metric name");
      Labels labels;
      if (i < line.size() && line[i] == '{') {
        ++i;
        while (i < line.size() && line[i] != '}') {
          const std::size_t eq = line.find('=', i);
          if (eq == std::string_view::npos || eq + 1 >= line.size() || line[eq + 1] != '"') {
            return fail(line_number, "bad label");
          }
          std::string label(line.substr(i, eq - i));
          std::string value;
          std::size_t k = eq + 2;
          for (; k < line.size() && line[k] != '"'; ++k) {
            if (line[k] == '\\' && k + 1 < line.size()) {
              ++k;
              value += line[k] == 'n' ? '\n' : line[k];
            } else {
              value += line[k];
            }
          }
          if (k >= line.size()) return fail(line_number, "unterminated label value");
          labels.emplace_back(std::move(label), std::move(value));
          i = k + 1;
          if (i < line.size() && line[i] == ',') ++i;
        }
        if (i >= line.size()) return fail(line_number, "unterminated label set");
        ++i;
      }
      if (i >= line.size() || line[i] != ' ') return fail(line_number, "no value");
      const std::string number(line.substr(i + 1));
      char* end = nullptr;
      const double value = std::strtod(number.c_str(), &end);
      if (number.empty() || end != number.c_str() + number.size()) {
        return fail(line_number, "bad value \"" + number + "\"");
      }
      if (!declared(types, name)) return fail(line_number, "sample before its # TYPE: " + name);
      std::sort(labels.begin(), labels.end());
      samples_[{name, labels}] = value;
    }
  }

  static bool declared(const std::map<std::string, std::string>& types, const std::string& name) {
    if (types.count(name)) return true;
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      const std::string_view s(suffix);
      if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0 &&
          types.count(name.substr(0, name.size() - s.size()))) {
        return true;
      }
    }
    return false;
  }
  void fail(std::size_t line, std::string why) {
    error_ = "line " + std::to_string(line) + ": " + why;
    samples_.clear();
  }

  std::map<std::pair<std::string, Labels>, double> samples_;
  std::string error_;
};

}  // namespace relay::testing
