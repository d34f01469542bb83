#pragma once

// Seeded generator of rules and events over a small vocabulary, so that generated rules and
// events overlap often: shared by the differential tests of the RuleIndex and of explain().
#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "pattern/pattern.h"

namespace relay::pattern::testing {

struct Vocabulary {
  std::vector<std::string> names;
};

class Generator {
 public:
  Generator(std::uint64_t seed, std::size_t name_count) : random_(seed) {
    for (std::size_t i = 0; i < name_count; ++i) {
      vocabulary_.names.push_back(i < 5 ? std::string(1, static_cast<char>('a' + i))
                                        : "f" + std::to_string(i));
    }
  }

  std::shared_ptr<const Pattern> rule() { return std::make_shared<const Pattern>(fields(0)); }

  std::string event() { return object(0); }

 private:
  std::size_t pick(std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(random_);
  }
  bool chance(int percent) { return static_cast<int>(pick(100)) < percent; }

  const std::string& name() {
    // Skewed towards the first names so that rules and events overlap often.
    const std::size_t n = vocabulary_.names.size();
    return vocabulary_.names[chance(70) ? pick(std::min<std::size_t>(n, 4)) : pick(n)];
  }

  std::string text() {
    static const char* kTexts[] = {
        "x", "y", "xy", "yx", "", "xyz", "2026-01-01T09:30:00Z", "2026-01-01T11:00:00+02:00"};
    return kTexts[pick(std::size(kTexts))];
  }

  double number() {
    static const double kNumbers[] = {0, 1, 2, 1.5, -1, 1e300};
    return kNumbers[pick(std::size(kNumbers))];
  }

  std::vector<Field> fields(int depth) {
    std::vector<Field> out;
    const std::size_t count = 1 + pick(chance(60) ? 1 : 3);
    for (std::size_t i = 0; i < count; ++i) {
      std::string field_name = name();
      bool duplicate = false;
      for (const Field& f : out) duplicate = duplicate || f.name == field_name;
      if (duplicate) continue;
      Field field{field_name, {}};
      const std::size_t alternatives = 1 + pick(chance(60) ? 1 : 3);
      for (std::size_t j = 0; j < alternatives; ++j)
        field.alternatives.push_back(alternative(depth));
      out.push_back(std::move(field));
    }
    return out;
  }

  Alternative alternative(int depth) {
    switch (pick(depth < 3 ? 9 : 8)) {
      case 0:
      case 1: {
        Literal literal;
        literal.kind = Literal::Kind::kString;
        literal.string = text();
        return literal;
      }
      case 2: {
        Literal literal;
        const std::size_t kind = pick(4);
        if (kind <= 1) {
          literal.kind = Literal::Kind::kNumber;
          literal.number = number();
        } else if (kind == 2) {
          literal.kind = Literal::Kind::kBool;
          literal.boolean = chance(50);
        }
        return literal;
      }
      case 3:
        return Prefix{text().substr(0, pick(3))};
      case 4:
        return Suffix{text().substr(0, pick(3))};
      case 5:
        return Exists{chance(60)};
      case 6: {
        Comparison comparison;
        comparison.op = static_cast<Comparison::Op>(pick(4));
        if (chance(30)) {
          comparison.temporal = true;
          comparison.offset = std::chrono::minutes(static_cast<int>(pick(120)) - 60);
        } else {
          comparison.number = number();
        }
        return comparison;
      }
      default:
        return Nested{fields(depth + 1)};
    }
  }

  std::string value(int depth) {
    switch (pick(depth < 3 ? 7 : 5)) {
      case 0:
      case 1:
        return "\"" + text() + "\"";
      case 2: {
        static const char* kNumbers[] = {"0",  "1",     "1.0", "2",     "1.5",
                                         "-1", "1e300", "-0",  "1e400", "-1e400"};
        return kNumbers[pick(std::size(kNumbers))];
      }
      case 3: {
        static const char* kWords[] = {"true", "false", "null"};
        return kWords[pick(3)];
      }
      case 4:
        return "\"" + text() + "\"";
      case 5: {
        std::string out = "[";
        const std::size_t count = pick(4);
        for (std::size_t i = 0; i < count; ++i) {
          if (i > 0) out += ",";
          out += chance(40) ? object(depth + 1) : value(depth + 1);
        }
        return out + "]";
      }
      default:
        return object(depth + 1);
    }
  }

  std::string object(int depth) {
    std::string out = "{";
    const std::size_t count = pick(5);
    std::vector<std::string> used;
    for (std::size_t i = 0; i < count; ++i) {
      const std::string& key = name();
      // An event repeats no key (event::decode() rejects it): a repeat is left out.
      if (std::find(used.begin(), used.end(), key) != used.end()) continue;
      used.push_back(key);
      if (out.size() > 1) out += ",";
      out += "\"" + key + "\":" + value(depth);
    }
    return out + "}";
  }

  std::mt19937_64 random_;
  Vocabulary vocabulary_;
};

}  // namespace relay::pattern::testing
