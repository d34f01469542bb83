#include "stream/stream_entry.h"

namespace relay::stream {
namespace {

redis::Error shape(std::string message) {
  return {redis::ErrorKind::kProtocol, "unexpected stream reply: " + std::move(message)};
}

}  // namespace

redis::Result<std::vector<StreamEntry>> parseEntries(redis::ReplyView entries) {
  auto items = entries.elements();
  if (!items.ok()) return items.error();
  std::vector<StreamEntry> parsed;
  parsed.reserve(items->size());
  for (const redis::ReplyView& item : *items) {
    auto id = item.at(0);
    auto body = item.at(1);
    if (!id.ok() || !body.ok()) return shape("entry is not [id, fields]");
    auto id_text = id->string();
    if (!id_text.ok()) return id_text.error();
    StreamEntry entry;
    entry.id = std::string(*id_text);
    if (body->isNil()) {
      entry.deleted = true;
    } else {
      auto fields = body->elements();
      if (!fields.ok()) return fields.error();
      if (fields->size() % 2 != 0) return shape("odd number of field/value items");
      for (std::size_t i = 0; i < fields->size(); i += 2) {
        auto name = (*fields)[i].string();
        auto value = (*fields)[i + 1].string();
        if (!name.ok() || !value.ok()) return shape("field or value is not a string");
        entry.fields.emplace_back(std::string(*name), std::string(*value));
      }
    }
    parsed.push_back(std::move(entry));
  }
  return parsed;
}

redis::Result<std::vector<StreamEntry>> parseReadGroup(redis::ReplyView reply) {
  if (reply.isNil()) return std::vector<StreamEntry>{};
  auto stream = reply.at(0);
  if (!stream.ok()) return stream.error();
  auto entries = stream->at(1);
  if (!entries.ok()) return entries.error();
  return parseEntries(*entries);
}

redis::Result<AutoClaimPage> parseAutoClaim(redis::ReplyView reply) {
  auto next = reply.at(0);
  auto entries = reply.at(1);
  if (!next.ok() || !entries.ok()) return shape("XAUTOCLAIM reply is not [next, entries, ...]");
  auto next_text = next->string();
  if (!next_text.ok()) return next_text.error();
  auto parsed = parseEntries(*entries);
  if (!parsed.ok()) return parsed.error();
  AutoClaimPage page;
  page.next = std::string(*next_text);
  for (StreamEntry& entry : *parsed) {
    if (entry.deleted) {
      page.deleted.push_back(entry.id);
    } else {
      page.entries.push_back(std::move(entry));
    }
  }
  if (reply.size() >= 3) {
    auto deleted = reply.at(2)->elements();
    if (!deleted.ok()) return deleted.error();
    for (const redis::ReplyView& id : *deleted) {
      auto text = id.string();
      if (!text.ok()) return text.error();
      page.deleted.emplace_back(*text);
    }
  }
  return page;
}

}  // namespace relay::stream
