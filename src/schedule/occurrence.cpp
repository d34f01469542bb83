#include "schedule/occurrence.h"

#include <chrono>
#include <optional>

#include <nlohmann/json.hpp>

#include "common/rfc3339.h"

namespace relay::schedule {
namespace {

using Json = nlohmann::ordered_json;

// Names come from validated templates, but never let a stray byte turn into an exception.
std::string dump(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Json identity(const Occurrence& occurrence) {
  return Json{{"app", occurrence.app},
              {"schedule", occurrence.schedule},
              {"scheduled_at", occurrence.scheduledAtText()}};
}

/// The instant of a whole-second `...Z` text in the range a WallTime holds, or nullopt.
std::optional<WallTime> wholeSecondUtc(std::string_view text) {
  const std::optional<Instant> instant = parseRfc3339(text);
  if (!instant || instant->nanos != 0) return std::nullopt;
  using std::chrono::seconds;
  const auto limit = std::chrono::floor<seconds>(WallTime::max().time_since_epoch()).count();
  if (instant->seconds > limit || instant->seconds < -limit) return std::nullopt;
  const WallTime time{seconds(instant->seconds)};
  // One spelling only: `T` and `Z` upper case, no offset, no fraction (not even `.000`).
  if (formatRfc3339(time) != text) return std::nullopt;
  return time;
}

Result<std::string> stringMember(const Json& envelope, const char* name) {
  const auto member = envelope.find(name);
  if (member == envelope.end()) return Error::invalid(std::string("no \"") + name + "\" member");
  if (!member->is_string()) {
    return Error::invalid(std::string("\"") + name + "\" is " + member->type_name() +
                          ", expected a string");
  }
  return member->get<std::string>();
}

}  // namespace

std::string Occurrence::scheduledAtText() const { return formatRfc3339(scheduled_at); }

std::string Occurrence::id() const {
  return "schedule:" + app + ":" + schedule + ":" + scheduledAtText();
}

std::string Occurrence::envelope() const {
  Json json = identity(*this);
  json["occurrence_id"] = id();
  return dump(json);
}

std::string Occurrence::payload(std::string_view payload_json) const {
  Json json = Json{{"source", kPayloadSource}};
  json.update(identity(*this));
  std::string text = dump(json);
  // Spliced, not re-serialised: the template's payload reaches the handler exactly as loaded.
  text.pop_back();  // the closing brace
  text += ",\"payload\":";
  text += payload_json.empty() ? std::string_view("{}") : payload_json;
  text += '}';
  return text;
}

Result<Occurrence> parseEnvelope(std::string_view json) {
  Json envelope;
  try {
    envelope = Json::parse(json);
  } catch (const Json::exception& error) {
    return Error::invalid(std::string("not valid JSON: ") + error.what());
  }
  if (!envelope.is_object()) {
    return Error::invalid(std::string("is ") + envelope.type_name() + ", expected a JSON object");
  }
  Occurrence occurrence;
  auto app = stringMember(envelope, "app");
  if (!app.ok()) return app.error();
  auto name = stringMember(envelope, "schedule");
  if (!name.ok()) return name.error();
  auto scheduled_at = stringMember(envelope, "scheduled_at");
  if (!scheduled_at.ok()) return scheduled_at.error();
  auto id = stringMember(envelope, "occurrence_id");
  if (!id.ok()) return id.error();
  occurrence.app = std::move(app).value();
  occurrence.schedule = std::move(name).value();
  const std::optional<WallTime> at = wholeSecondUtc(*scheduled_at);
  if (!at) {
    return Error::invalid("\"scheduled_at\" \"" + *scheduled_at +
                          "\" is not RFC 3339 UTC in whole seconds (YYYY-MM-DDTHH:MM:SSZ)");
  }
  occurrence.scheduled_at = *at;
  if (*id != occurrence.id()) {
    return Error::invalid("\"occurrence_id\" \"" + *id +
                          "\" does not match the app, schedule "
                          "and scheduled_at (expected \"" +
                          occurrence.id() + "\")");
  }
  return occurrence;
}

}  // namespace relay::schedule
