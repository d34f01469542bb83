#include "cli/explanation_json.h"

namespace relay::cli {

nlohmann::ordered_json explanationJson(const pattern::Explanation& explanation) {
  nlohmann::ordered_json json = {{"match", explanation.matched}};
  if (const auto& failure = explanation.failure) {
    json["path"] = failure->path;
    json["got"] = failure->got;
    json["wanted"] = failure->wanted;
    json["reason"] = failure->toString();
  }
  return json;
}

}  // namespace relay::cli
