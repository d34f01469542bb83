#include "invocation/message.h"

namespace relay::invocation {

const std::string* Message::find(std::string_view name) const {
  for (const auto& [field, value] : fields) {
    if (field == name) return &value;
  }
  return nullptr;
}

}  // namespace relay::invocation
