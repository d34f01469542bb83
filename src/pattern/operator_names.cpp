#include "pattern/operator_names.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <vector>

namespace relay::pattern {
namespace {

struct Spelling {
  std::string_view text;
  OperatorName name;
};

constexpr std::array<Spelling, 7> kOperators = {{
    {"prefix", OperatorName::kPrefix},
    {"suffix", OperatorName::kSuffix},
    {"exists", OperatorName::kExists},
    {"gt", OperatorName::kGt},
    {"gte", OperatorName::kGte},
    {"lt", OperatorName::kLt},
    {"lte", OperatorName::kLte},
}};

struct Foreign {
  std::string_view text;
  std::string_view hint;
};

// Operators of other matchers (EventBridge, Mongo-style, SQL-ish) that people reach for.
constexpr std::array<Foreign, 20> kForeign = {{
    {"equals", "there is no equals operator: a bare literal is equality"},
    {"equal", "there is no equals operator: a bare literal is equality"},
    {"eq", "there is no eq operator: a bare literal is equality"},
    {"is", "there is no is operator: a bare literal is equality"},
    {"ne", "there is no negation operator"},
    {"neq", "there is no negation operator"},
    {"not", "there is no negation operator"},
    {"anything-but", "there is no negation operator"},
    {"in", "list the values as alternatives instead: field: [a, b]"},
    {"any", "list the values as alternatives instead: field: [a, b]"},
    {"ge", "did you mean gte?"},
    {"le", "did you mean lte?"},
    {"numeric", "use gt, gte, lt or lte"},
    {"between", "use gt, gte, lt or lte as separate fields of nested maps"},
    {"contains", "only prefix and suffix match parts of strings"},
    {"wildcard", "only prefix and suffix match parts of strings"},
    {"regex", "only prefix and suffix match parts of strings"},
    {"startswith", "did you mean prefix?"},
    {"endswith", "did you mean suffix?"},
    {"exist", "did you mean exists?"},
}};

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Optimal string alignment distance (Levenshtein plus adjacent transpositions).
std::size_t editDistance(std::string_view a, std::string_view b) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

}  // namespace

std::optional<OperatorName> operatorNamed(std::string_view key) {
  for (const Spelling& spelling : kOperators) {
    if (spelling.text == key) return spelling.name;
  }
  return std::nullopt;
}

std::string_view operatorSpelling(OperatorName name) {
  for (const Spelling& spelling : kOperators) {
    if (spelling.name == name) return spelling.text;
  }
  return "?";
}

std::optional<std::string> misspelledOperatorHint(std::string_view key) {
  if (key.size() > 32) return std::nullopt;
  const std::string folded = lower(key);
  for (const Spelling& spelling : kOperators) {
    if (folded == spelling.text) return "did you mean " + std::string(spelling.text) + "?";
  }
  for (const Foreign& foreign : kForeign) {
    if (folded == foreign.text) return std::string(foreign.hint);
  }
  // Only the long operator names get typo detection: one or two edits from gt or lt would
  // flag ordinary short field names such as id or at.
  for (const Spelling& spelling : kOperators) {
    if (spelling.text.size() < 6) continue;
    if (editDistance(folded, spelling.text) <= 2) {
      return "did you mean " + std::string(spelling.text) + "?";
    }
  }
  return std::nullopt;
}

}  // namespace relay::pattern
