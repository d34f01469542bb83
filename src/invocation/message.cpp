#include "invocation/message.h"

namespace relay::invocation {

const std::string* Message::find(std::string_view name) const {
  for (const auto& [field, value] : fields) {
    if (field == name) return &value;
  }
  return nullptr;
}

std::string_view Message::valueOf(std::string_view name) const {
  const std::string* value = find(name);
  return value ? std::string_view(*value) : std::string_view();
}

}  // namespace relay::invocation
