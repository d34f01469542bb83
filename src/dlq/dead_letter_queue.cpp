#include "dlq/dead_letter_queue.h"

#include <algorithm>

#include "stream/stream_entry.h"
#include "stream/stream_id.h"

namespace relay::dlq {
namespace {

// The newest bound to read from: `upto`, or the filter's time bound when that is older.
std::string newestToRead(const DlqFilter& filter, const std::string& upto) {
  const std::string until = filter.newestBound();
  if (until == "+") return upto;
  const auto bound = stream::StreamId::parse(upto);
  const auto limit = stream::StreamId::parse(until);
  return bound && limit && *limit < *bound ? until : upto;
}

}  // namespace

DeadLetterQueue::DeadLetterQueue(redis::Connection& redis, std::string key, std::size_t batch,
                                 redis::ReplyLimits limits)
    : redis_(redis),
      key_(std::move(key)),
      batch_(std::max<std::size_t>(batch, 1)),
      limits_(limits) {}

redis::Result<std::optional<Entry>> DeadLetterQueue::find(std::string_view id) {
  auto reply = redis_.command({"XRANGE", key_, id, id}, limits_);
  if (!reply.ok()) return reply.error();
  auto entries = stream::parseEntries(reply->view());
  if (!entries.ok()) return entries.error();
  if (entries->empty()) return std::optional<Entry>();
  return std::optional<Entry>(Entry::from(std::move(entries->front())));
}

redis::Result<long long> DeadLetterQueue::length() {
  auto reply = redis_.command({"XLEN", key_});
  if (!reply.ok()) return reply.error();
  return reply->integer();
}

redis::Result<std::string> DeadLetterQueue::newestId() {
  auto reply = redis_.command({"XREVRANGE", key_, "+", "-", "COUNT", "1"}, limits_);
  if (!reply.ok()) return reply.error();
  auto entries = stream::parseEntries(reply->view());
  if (!entries.ok()) return entries.error();
  return entries->empty() ? std::string() : entries->front().id;
}

redis::Status DeadLetterQueue::scan(const DlqFilter& filter, const std::string& newest,
                                    const std::function<bool(Entry&)>& visit) {
  std::string end = newest;
  const std::string start = filter.oldestBound();
  const std::string count = std::to_string(batch_);
  while (true) {
    auto reply = redis_.command({"XREVRANGE", key_, end, start, "COUNT", count}, limits_);
    if (!reply.ok()) return reply.error();
    auto entries = stream::parseEntries(reply->view());
    if (!entries.ok()) return entries.error();
    if (entries->empty()) return {};
    // Taken first: visit() may move the entries away.
    const std::string last = entries->back().id;
    for (stream::StreamEntry& record : *entries) {
      Entry entry = Entry::from(std::move(record));
      if (filter.matches(entry) && !visit(entry)) return {};
    }
    if (entries->size() < batch_) return {};
    end = "(" + last;  // exclusive: continue below the last one read
  }
}

redis::Result<DlqPage> DeadLetterQueue::page(const DlqFilter& filter, std::string_view upto,
                                             std::string_view before, std::size_t limit) {
  DlqPage page;
  if (upto.empty()) {
    auto newest = newestId();
    if (!newest.ok()) return newest.error();
    page.upto = *newest;
    if (page.upto.empty()) return page;
  } else {
    page.upto = std::string(upto);
  }
  const std::string end = newestToRead(filter, page.upto);
  const std::optional<stream::StreamId> cursor = stream::StreamId::parse(before);
  bool more = false;
  auto scanned = scan(filter, end, [&](Entry& entry) {
    ++page.total;
    const std::optional<stream::StreamId> id = stream::StreamId::parse(entry.id());
    if (cursor && id && !(*id < *cursor)) return true;  // at or above the cursor: earlier pages
    if (page.entries.size() < limit) {
      page.entries.push_back(std::move(entry));
    } else {
      more = true;
    }
    return true;
  });
  if (!scanned.ok()) return scanned.error();
  if (more && !page.entries.empty()) page.next = page.entries.back().id();
  return page;
}

redis::Result<DlqSelection> DeadLetterQueue::select(const DlqFilter& filter,
                                                    std::string_view upto) {
  DlqSelection selection;
  if (upto.empty()) {
    auto newest = newestId();
    if (!newest.ok()) return newest.error();
    selection.upto = *newest;
    if (selection.upto.empty()) return selection;
  } else {
    selection.upto = std::string(upto);
  }
  auto scanned = scan(filter, newestToRead(filter, selection.upto), [&](Entry& entry) {
    selection.ids.push_back(entry.id());
    return true;
  });
  if (!scanned.ok()) return scanned.error();
  return selection;
}

redis::Result<long long> DeadLetterQueue::remove(const std::vector<std::string>& ids) {
  long long removed = 0;
  for (std::size_t at = 0; at < ids.size(); at += batch_) {
    std::vector<std::string> command = {"XDEL", key_};
    const std::size_t stop = std::min(ids.size(), at + batch_);
    command.insert(command.end(), ids.begin() + static_cast<std::ptrdiff_t>(at),
                   ids.begin() + static_cast<std::ptrdiff_t>(stop));
    auto reply = redis_.command(command);
    if (!reply.ok()) return reply.error();
    auto count = reply->integer();
    if (!count.ok()) return count.error();
    removed += *count;
  }
  return removed;
}

}  // namespace relay::dlq
