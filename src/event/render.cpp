#include "event/render.h"

#include <algorithm>

#include "common/quote_json.h"

namespace relay::event {
namespace {

// Appends `value`; stops early (returns false) once `out` is longer than `limit`.
bool append(const Value& value, std::size_t limit, std::string& out) {
  switch (value.type()) {
    case Type::kNull:
      out += "null";
      break;
    case Type::kFalse:
      out += "false";
      break;
    case Type::kTrue:
      out += "true";
      break;
    case Type::kNumber:
      out += value.numberText();
      break;
    case Type::kString:
      out += quoteJson(value.string());
      break;
    case Type::kArray: {
      out += '[';
      bool first = true;
      for (const Value element : value.elements()) {
        if (!first) out += ',';
        first = false;
        if (out.size() > limit || !append(element, limit, out)) return false;
      }
      out += ']';
      break;
    }
    case Type::kObject: {
      out += '{';
      bool first = true;
      for (auto it = value.members().begin(); it != value.members().end(); ++it) {
        if (!first) out += ',';
        first = false;
        out += quoteJson(it.key());
        out += ':';
        if (out.size() > limit || !append(*it, limit, out)) return false;
      }
      out += '}';
      break;
    }
  }
  return out.size() <= limit;
}

void pretty(const Value& value, int depth, const std::function<void(std::string_view)>& out) {
  static constexpr std::string_view kSpaces = "                                ";
  const auto newline = [&out](int level) {
    out("\n");
    for (int left = 2 * level; left > 0;) {
      const int take = std::min<int>(left, static_cast<int>(kSpaces.size()));
      out(kSpaces.substr(0, static_cast<std::size_t>(take)));
      left -= take;
    }
  };
  switch (value.type()) {
    case Type::kNull:
      return out("null");
    case Type::kFalse:
      return out("false");
    case Type::kTrue:
      return out("true");
    case Type::kNumber:
      return out(value.numberText());
    case Type::kString:
      return out(quoteJson(value.string()));
    case Type::kArray: {
      if (value.size() == 0) return out("[]");
      out("[");
      bool first = true;
      for (const Value element : value.elements()) {
        if (!first) out(",");
        first = false;
        newline(depth + 1);
        pretty(element, depth + 1, out);
      }
      newline(depth);
      return out("]");
    }
    case Type::kObject: {
      if (value.size() == 0) return out("{}");
      out("{");
      bool first = true;
      for (auto it = value.members().begin(); it != value.members().end(); ++it) {
        if (!first) out(",");
        first = false;
        newline(depth + 1);
        out(quoteJson(it.key()));
        out(": ");
        pretty(*it, depth + 1, out);
      }
      newline(depth);
      return out("}");
    }
  }
}

}  // namespace

void renderPretty(const Value& value, const std::function<void(std::string_view)>& out) {
  pretty(value, 0, out);
}

std::string render(const Value& value, std::size_t max_bytes) {
  std::string out;
  if (append(value, max_bytes, out)) return out;
  std::size_t cut = std::min(out.size(), max_bytes);
  while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
  out.resize(cut);
  return out + "...";
}

}  // namespace relay::event
