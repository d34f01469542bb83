// libFuzzer target: event::decode() on arbitrary bytes. It must never crash; an accepted event
// keeps its raw bytes unchanged and every value of it can be read; simdjson (an independent
// validator) must agree on validity except where Relay deliberately differs: numbers beyond
// the double range (accepted as ±infinity), nesting beyond 64 levels and repeated keys
// (rejected). An accepted event's objects have no repeated key.
#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "event/event.h"

namespace {

std::size_t walk(const relay::event::Value& value) {
  std::size_t count = 1;
  switch (value.type()) {
    case relay::event::Type::kObject:
      for (auto it = value.members().begin(); !(it == value.members().end()); ++it) {
        count += it.key().size() + walk(*it);
        // find() gives the first member of a name: this one, unless a name repeats.
        const auto found = value.find(it.key());
        if (!found || found->index() != (*it).index()) std::abort();
      }
      break;
    case relay::event::Type::kArray:
      for (const relay::event::Value element : value.elements()) count += walk(element);
      break;
    case relay::event::Type::kString:
      count += value.string().size();
      break;
    case relay::event::Type::kNumber:
      count += value.number() > 0 ? 1 : 0;
      break;
    default:
      break;
  }
  return count;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string raw(reinterpret_cast<const char*>(data), size);
  relay::Result<relay::event::Event> event = relay::event::decode(raw);
  if (event.ok()) {
    if (event->raw() != raw || !event->root().isObject()) std::abort();
    walk(event->root());
  } else if (event.error().message.empty()) {
    std::abort();
  }

  static simdjson::dom::parser parser;
  simdjson::dom::element element;
  const simdjson::error_code error = parser.parse(raw).get(element);
  const bool theirs = !error && element.is_object();
  if (event.ok() && !theirs && error != simdjson::NUMBER_ERROR) {
    std::abort();
  }
  if (!event.ok() && theirs &&
      event.error().message.find("nested deeper than") == std::string::npos &&
      event.error().message.rfind("duplicate key ", 0) != 0) {
    std::abort();
  }
  return 0;
}
