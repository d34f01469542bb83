#include "dlq/dlq_filter.h"

#include <algorithm>

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

}  // namespace relay::dlq
