#include "event/render.h"

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

}  // namespace

std::string render(const Value& value, std::size_t max_bytes) {
  std::string out;
  if (append(value, max_bytes, out)) return out;
  std::size_t cut = std::min(out.size(), max_bytes);
  while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;
  out.resize(cut);
  return out + "...";
}

}  // namespace relay::event
