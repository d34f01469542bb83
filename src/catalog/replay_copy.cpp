#include "catalog/replay_copy.h"

#include <nlohmann/json.hpp>

#include "app/names.h"
#include "common/whole_number.h"

namespace relay::catalog {
namespace {

using Json = nlohmann::ordered_json;

bool streamId(std::string_view text) {
  const std::size_t dash = text.find('-');
  long long ms = 0, seq = 0;
  return dash != std::string_view::npos && parseWholeNumber(text.substr(0, dash), ms) &&
         parseWholeNumber(text.substr(dash + 1), seq);
}

Error invalid(std::string_view what) {
  return Error::invalid("relay_replay: " + std::string(what));
}

}  // namespace

long long ReplayCopy::originalMs() const {
  long long ms = 0;
  (void)parseWholeNumber(std::string_view(original_id).substr(0, original_id.find('-')), ms);
  return ms;
}

std::string ReplayCopy::envelope() const {
  Json json = {{"replay", replay},
               {"group", group},
               {"original_id", original_id},
               {"app", app},
               {"mode", mode == Mode::kRules ? "rules" : "dlq"}};
  if (!handler.empty()) json["handler"] = handler;
  if (!dlq_id.empty()) json["dlq_id"] = dlq_id;
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Result<ReplayCopy> parseReplayEnvelope(std::string_view text) {
  const Json json = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return invalid("expected a JSON object");
  ReplayCopy copy;
  const auto member = [&json](const char* name, std::string& out, bool required) {
    const auto found = json.find(name);
    if (found == json.end()) return !required;
    if (!found->is_string()) return false;
    out = found->get<std::string>();
    return true;
  };
  std::string mode;
  for (const auto& [name, slot] : {std::pair<const char*, std::string*>{"replay", &copy.replay},
                                   {"group", &copy.group},
                                   {"original_id", &copy.original_id},
                                   {"app", &copy.app},
                                   {"mode", &mode}}) {
    if (!member(name, *slot, true) || slot->empty()) {
      return invalid(std::string("\"") + name + "\" must be a non-empty string");
    }
  }
  if (!member("handler", copy.handler, false) || !member("dlq_id", copy.dlq_id, false)) {
    return invalid("\"handler\" and \"dlq_id\" must be strings");
  }
  if (!streamId(copy.original_id)) return invalid("\"original_id\" is not a stream id");
  if (!app::isValidName(copy.app)) return invalid("\"app\" is not a valid app name");
  if (mode == "rules") {
    copy.mode = ReplayCopy::Mode::kRules;
  } else if (mode == "dlq") {
    copy.mode = ReplayCopy::Mode::kDeadLetter;
    if (copy.handler.empty() || !streamId(copy.dlq_id)) {
      return invalid("a \"dlq\" copy names its \"handler\" and its \"dlq_id\"");
    }
  } else {
    return invalid("\"mode\" must be \"rules\" or \"dlq\"");
  }
  return copy;
}

}  // namespace relay::catalog
