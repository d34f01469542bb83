#include "dlq/dlq_filter.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "stream/stream_id.h"

namespace relay::dlq {
namespace {

char lowerAscii(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

}  // namespace

bool containsIgnoringCase(std::string_view haystack, std::string_view needle) {
  if (needle.empty()) return true;
  const auto found = std::search(haystack.begin(), haystack.end(), needle.begin(), needle.end(),
                                 [](char a, char b) { return lowerAscii(a) == lowerAscii(b); });
  return found != haystack.end();
}

bool DlqFilter::matches(const Entry& entry) const {
  if (!app.empty() && entry.app() != app) return false;
  if (!handler.empty() && entry.handler() != handler) return false;
  if (kind && entry.kind != *kind) return false;
  if (since_ms || until_ms) {
    const std::optional<stream::StreamId> id = stream::StreamId::parse(entry.id());
    if (!id) return false;
    const auto ms = static_cast<std::int64_t>(id->ms);
    if (since_ms && ms < *since_ms) return false;
    if (until_ms && ms > *until_ms) return false;
  }
  if (!containsIgnoringCase(entry.reason(), reason)) return false;
  return containsIgnoringCase(entry.event(), text);
}

std::string DlqFilter::newestBound() const {
  if (!until_ms || *until_ms < 0) return "+";
  return std::to_string(*until_ms) + "-18446744073709551615";
}

std::string DlqFilter::oldestBound() const {
  if (!since_ms || *since_ms < 0) return "-";
  return std::to_string(*since_ms) + "-0";
}

std::string DlqFilter::toJson() const {
  nlohmann::ordered_json json = nlohmann::ordered_json::object();
  if (!app.empty()) json["app"] = app;
  if (!handler.empty()) json["handler"] = handler;
  if (kind) json["kind"] = std::string(kindName(*kind));
  if (!reason.empty()) json["reason"] = reason;
  if (!text.empty()) json["q"] = text;
  if (since_ms) json["since"] = *since_ms;
  if (until_ms) json["until"] = *until_ms;
  return json.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

Result<DlqFilter> DlqFilter::fromJson(std::string_view text) {
  const auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return Error::invalid("DLQ filter: expected a JSON object");
  DlqFilter filter;
  for (const auto& [name, value] : json.items()) {
    if (name == "since" || name == "until") {
      if (!value.is_number_integer()) return Error::invalid("DLQ filter: " + name + ": not ms");
      (name == "since" ? filter.since_ms : filter.until_ms) = value.get<std::int64_t>();
      continue;
    }
    if (!value.is_string()) return Error::invalid("DLQ filter: " + name + ": not a string");
    const std::string v = value.get<std::string>();
    if (name == "app") {
      filter.app = v;
    } else if (name == "handler") {
      filter.handler = v;
    } else if (name == "reason") {
      filter.reason = v;
    } else if (name == "q") {
      filter.text = v;
    } else if (name == "kind") {
      filter.kind = parseKind(v);
      if (!filter.kind) return Error::invalid("DLQ filter: unknown kind \"" + v + "\"");
    } else {
      return Error::invalid("DLQ filter: unknown member \"" + name + "\"");
    }
  }
  return filter;
}

}  // namespace relay::dlq
