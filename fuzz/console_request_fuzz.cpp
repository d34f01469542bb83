// libFuzzer target: the console's request decoding (src/console/request_body.h) on arbitrary
// bytes, as any client of POST /api/dlq/delete, /api/dlq/replay, /api/playground and
// /api/login may send them. It must never crash or recurse without bound (a 700,000-deep
// array crashed the console); what it accepts must be what the event decoder accepts, and a
// selection it returns must name only well-formed ids.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "console/request_body.h"
#include "event/event.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  auto decoded = relay::console::decodeBody(body);
  if (decoded.ok()) {
    if (!decoded->is_object() || !relay::event::decode(body).ok()) std::abort();
    (void)decoded->dump();  // bounded: at most 64 deep
  }
  auto selection = relay::console::parseSelection(body);
  if (selection.ok()) {
    if (!decoded.ok()) std::abort();
    for (const std::string& id : selection->ids) {
      if (!relay::console::validEntryId(id)) std::abort();
    }
    if (selection->filter && !relay::console::validEntryId(selection->upto)) std::abort();
    if (!selection->filter && selection->ids.empty()) std::abort();
  } else if (selection.error().message.empty()) {
    std::abort();
  }
  return 0;
}
