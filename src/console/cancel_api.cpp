#include "console/cancel_api.h"

#include <chrono>

#include "common/system_clock.h"
#include "console/console_guard.h"
#include "console/request_body.h"
#include "invocation/cancel_results.h"
#include "invocation/keys.h"
#include "invocation/redis_lifecycle_store.h"

namespace relay::console {

Result<CancelSelection> parseCancelSelection(std::string_view body) {
  auto json = decodeBody(body);
  if (!json.ok()) return json.error();
  CancelSelection selection;
  for (const auto& [key, value] : json->items()) {
    if (key == "dead_letter") {
      if (!value.is_boolean()) return Error::invalid("dead_letter: expected true or false");
      selection.dead_letter = value.get<bool>();
    } else if (key != "invocations") {
      return Error::invalid(key + ": not a key of a cancel (invocations, dead_letter)");
    }
  }
  const auto list = json->find("invocations");
  if (list == json->end() || !list->is_array() || list->empty()) {
    return Error::invalid("invocations: expected a non-empty array");
  }
  if (list->size() > kMaxCancelTargets) {
    return Error::invalid("invocations: at most " + std::to_string(kMaxCancelTargets));
  }
  for (const Json& item : *list) {
    const auto id = item.is_object() ? item.find("id") : item.end();
    const auto what = item.is_object() ? item.find("invocation") : item.end();
    if (!item.is_object() || item.size() != 2 || id == item.end() || what == item.end() ||
        !id->is_string() || !what->is_string()) {
      return Error::invalid(
          "invocations: each is {\"id\": <ms>-<seq>, \"invocation\": "
          "\"*\" or \"<app>/<handler>\"}");
    }
    const std::string text = what->get<std::string>();
    const std::size_t slash = text.find('/');
    const bool field = slash != std::string::npos && slash > 0 && slash + 1 < text.size();
    if (!validEntryId(id->get<std::string>()) || (text != "*" && !field)) {
      return Error::invalid("invocations: \"" + id->get<std::string>() + "\" / \"" + text +
                            "\": expected <ms>-<seq> and \"*\" or \"<app>/<handler>\"");
    }
    selection.targets.push_back({id->get<std::string>(), text});
  }
  return selection;
}

http::HttpReply cancelInvocations(ConsoleState& state, const http::HttpRequest& request) {
  auto selection = parseCancelSelection(request.body);
  if (!selection.ok()) return jsonError(400, selection.error().message);
  invocation::RedisStoreSettings settings;
  settings.keys = state.keys;
  settings.consumer = "relay-console";
  settings.retention = state.config.worker.invocation_retention;
  SystemClock clock;
  invocation::RedisLifecycleStore store(settings, state.config.worker.redis, clock);
  // Named in the workers' logs and the message's state: which request stopped what.
  const std::string cancel_id = "console-" + std::to_string(nowMs(state.clock));
  Json results = Json::array();
  for (const CancelSelection::Target& target : selection->targets) {
    invocation::CancelRequest cancel;
    cancel.target = target.what;
    cancel.dead_letter = selection->dead_letter;
    cancel.id = cancel_id;
    for (const invocation::CancelResult& result :
         invocation::cancelResults(target.id, target.what, store.cancel(target.id, cancel))) {
      Json row = {{"message_id", result.message_id},
                  {"invocation", result.invocation},
                  {"result", result.result},
                  {"acknowledged", result.acknowledged}};
      if (!result.error.empty()) row["error"] = result.error;
      results.push_back(std::move(row));
    }
  }
  return jsonReply({{"results", std::move(results)}});
}

}  // namespace relay::console
