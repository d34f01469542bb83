#include "console/request_body.h"

#include "common/rfc3339.h"
#include "common/whole_number.h"
#include "event/event.h"
#include "stream/stream_id.h"

namespace relay::console {
namespace {

constexpr std::string_view kShape =
    "expected {\"ids\": [...]} or {\"filter\": {...}, \"upto\": id, \"expected\": count} as the "
    "Dead letters page sends it";

Result<std::int64_t> parseTime(std::string_view name, const std::string& text) {
  std::int64_t ms = 0;
  if (parseWholeNumber(text, ms)) return ms;
  if (const auto instant = parseRfc3339(text)) {
    return instant->seconds * 1000 + instant->nanos / 1'000'000;
  }
  return Error::invalid(std::string(name) +
                        ": expected an RFC 3339 time (2026-01-01T10:00:00Z) or Unix milliseconds");
}

}  // namespace

Result<dlq::DlqFilter> parseDlqFilter(const ParamGetter& get) {
  dlq::DlqFilter filter;
  const auto text = [&get](std::string_view name) { return get(name).value_or(""); };
  filter.app = text("app");
  filter.handler = text("handler");
  if (const std::string kind = text("kind"); !kind.empty()) {
    filter.kind = dlq::parseKind(kind);
    if (!filter.kind) {
      return Error::invalid(
          "kind: expected handler, malformed, oversized, schedule, poison or operator");
    }
  }
  filter.reason = text("reason");
  filter.text = text("q");
  for (const auto& [name, slot] :
       {std::pair{"since", &filter.since_ms}, {"until", &filter.until_ms}}) {
    const std::string value = text(name);
    if (value.empty()) continue;
    auto ms = parseTime(name, value);
    if (!ms.ok()) return ms.error();
    *slot = *ms;
  }
  return filter;
}

bool validEntryId(const std::string& id) {
  return id.find('-') != std::string::npos && stream::StreamId::parse(id).has_value();
}

Result<Json> decodeBody(std::string_view body) {
  auto checked = event::decode(std::string(body));
  if (!checked.ok()) return Error::invalid("the body: " + checked.error().message);
  Json parsed = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  // The decoder accepted it, so this cannot fail; checked all the same.
  if (parsed.is_discarded() || !parsed.is_object()) {
    return Error::invalid("the body: expected a JSON object");
  }
  return parsed;
}

Result<SelectionRequest> parseSelection(std::string_view body) {
  auto json = decodeBody(body);
  if (!json.ok()) return json.error();
  SelectionRequest request;
  if (const auto ids = json->find("ids"); ids != json->end()) {
    if (!ids->is_array() || ids->empty()) return Error::invalid("ids: expected an array of ids");
    for (const Json& id : *ids) {
      if (!id.is_string() || !validEntryId(id.get<std::string>())) {
        return Error::invalid("ids: every id must be <ms>-<seq>");
      }
      request.ids.push_back(id.get<std::string>());
    }
    return request;
  }
  const auto filter = json->find("filter");
  const auto upto = json->find("upto");
  const auto expected = json->find("expected");
  if (filter == json->end() || !filter->is_object() || upto == json->end() || !upto->is_string() ||
      !validEntryId(upto->get<std::string>()) || expected == json->end() ||
      !expected->is_number_integer()) {
    return Error::invalid(std::string(kShape));
  }
  for (const auto& [key, value] : filter->items()) {
    const bool time = key == "since" || key == "until";
    const bool text =
        key == "app" || key == "handler" || key == "kind" || key == "reason" || key == "q";
    if (!time && !text) {
      return Error::invalid("filter: unknown key \"" + key +
                            "\" (expected app, handler, kind, reason, q, since, until)");
    }
    if (!value.is_string() && !value.is_null() && !(time && value.is_number_integer())) {
      return Error::invalid("filter." + key + ": expected a string" +
                            (time ? " (RFC 3339) or Unix milliseconds" : "") + ", got " +
                            std::string(value.type_name()));
    }
  }
  auto parsed = parseDlqFilter([&filter](std::string_view name) -> std::optional<std::string> {
    const auto found = filter->find(std::string(name));
    if (found == filter->end() || found->is_null()) return std::nullopt;
    if (found->is_string()) return found->get<std::string>();
    return std::to_string(found->get<long long>());  // since/until in Unix milliseconds
  });
  if (!parsed.ok()) return parsed.error();
  request.filter = std::move(parsed).value();
  request.upto = upto->get<std::string>();
  request.expected = expected->get<long long>();
  return request;
}

}  // namespace relay::console
