#include "console/console_state.h"

#include "common/whole_number.h"
#include "console/console_guard.h"

namespace relay::console {

http::HttpReply jsonReply(const Json& body, int status) {
  return {status, body.dump(-1, ' ', false, Json::error_handler_t::replace), "application/json"};
}

http::HttpReply redisFailure(std::string_view what, const redis::Error& error) {
  return jsonError(502, "redis (" + std::string(what) + "): " + error.message);
}

Result<std::size_t> limitParam(const http::HttpRequest& request, std::size_t fallback,
                               std::size_t max) {
  const auto text = request.param("limit");
  if (!text || text->empty()) return fallback;
  std::size_t limit = 0;
  if (!parseWholeNumber(*text, limit) || limit == 0 || limit > max) {
    return Error::invalid("limit: expected 1.." + std::to_string(max));
  }
  return limit;
}

std::vector<std::pair<std::string, std::string>> hashPairs(
    const redis::Result<redis::Reply>& reply) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!reply.ok()) return out;
  for (std::size_t i = 0; i + 1 < reply->size(); i += 2) {
    auto name = reply->at(i);
    auto value = reply->at(i + 1);
    if (name.ok() && value.ok() && name->string().ok() && value->string().ok()) {
      out.emplace_back(*name->string(), *value->string());
    }
  }
  return out;
}

std::string eventPreview(std::string_view event) {
  constexpr std::size_t kPreviewBytes = 160;
  return std::string(event.substr(0, kPreviewBytes));
}

dlq::DeadLetterQueue deadLetters(const ConsoleState& state, redis::Connection& redis) {
  return dlq::DeadLetterQueue(redis, state.keys.dlq(), 500,
                              stream::entryReplyLimits(state.config.worker.max_event_bytes));
}

std::int64_t nowMs(const Clock& clock) { return unixMillis(clock.now()); }

}  // namespace relay::console
