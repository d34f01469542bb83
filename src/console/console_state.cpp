#include "console/console_state.h"

#include "console/console_guard.h"

namespace relay::console {

observability::HttpReply jsonReply(const Json& body, int status) {
  return {status, body.dump(-1, ' ', false, Json::error_handler_t::replace), "application/json"};
}

observability::HttpReply redisFailure(std::string_view what, const redis::Error& error) {
  return jsonError(502, "redis (" + std::string(what) + "): " + error.message);
}

std::int64_t nowMs(const Clock& clock) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock.now().time_since_epoch())
      .count();
}

}  // namespace relay::console
