#include "stream/stream_entry.h"

namespace relay::stream {
namespace {

redis::Error shape(std::string message) {
  return {redis::ErrorKind::kProtocol, "unexpected stream reply: " + std::move(message)};
}

// A string item, or one the read cut (redis::ReplyFilter): [its first bytes, its true length].
struct Item {
  std::string_view text;
  std::optional<std::uint64_t> cut_from;
};

std::optional<Item> itemOf(const redis::ReplyView& reply) {
  if (auto text = reply.string(); text.ok()) return Item{*text, std::nullopt};
  if (!reply.isArray() || reply.size() != 2) return std::nullopt;
  auto kept = reply.at(0)->string();
  auto length = reply.at(1)->integer();
  if (!kept.ok() || !length.ok() || *length < 0) return std::nullopt;
  return Item{*kept, static_cast<std::uint64_t>(*length)};
}

}  // namespace

redis::ReplyLimits entryReplyLimits(std::size_t max_event_bytes) {
  redis::ReplyLimits limits;
  limits.max_bulk = max_event_bytes;
  limits.max_array_bytes = 2 * max_event_bytes;
  limits.max_elements = invocation::kMaxMessageItems;
  limits.kept = invocation::kKeptValueBytes;
  return limits;
}

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
      std::size_t pairs_end = fields->size();
      // Items past the limits were dropped: the last element is the true count.
      if (pairs_end % 2 == 1) {
        auto all = (*fields)[pairs_end - 1].integer();
        if (!all.ok() || *all < 0) return shape("odd number of field/value items");
        entry.items_when_dropped = static_cast<std::uint64_t>(*all);
        --pairs_end;
      }
      for (std::size_t i = 0; i < pairs_end; i += 2) {
        const std::optional<Item> name = itemOf((*fields)[i]);
        const std::optional<Item> value = itemOf((*fields)[i + 1]);
        if (!name || !value) return shape("field or value is not a string");
        entry.fields.emplace_back(std::string(name->text), std::string(value->text));
        if (name->cut_from) entry.cut.emplace_back(std::string(name->text), *name->cut_from);
        if (value->cut_from) entry.cut.emplace_back(std::string(name->text), *value->cut_from);
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
