// What a read cut (redis::ReplyFilter with entryReplyLimits) becomes: parseEntries() keeps the
// first bytes and the true sizes, decodeMessage() makes the message oversized.
#include <gtest/gtest.h>
#include <hiredict/hiredict.h>

#include <string>
#include <vector>

#include "catalog/message_decoder.h"
#include "stream/stream_entry.h"

namespace relay::catalog {
namespace {

using stream::entryReplyLimits;
using stream::parseEntries;
using stream::StreamEntry;

constexpr std::size_t kMax = 1024;  // MAX_EVENT_BYTES of these tests

std::string bulk(const std::string& text) {
  return "$" + std::to_string(text.size()) + "\r\n" + text + "\r\n";
}

// XRANGE's reply for one entry with `fields`, read through entryReplyLimits(kMax).
std::vector<StreamEntry> readThroughLimits(const std::vector<std::string>& fields) {
  std::string resp = "*1\r\n*2\r\n" + bulk("7-0") + "*" + std::to_string(fields.size()) + "\r\n";
  for (const std::string& field : fields) resp += bulk(field);
  redis::ReplyFilter filter;
  filter.expect(entryReplyLimits(kMax));
  std::string filtered;
  filter.feed(resp, filtered);
  redictReader* reader = redictReaderCreate();
  EXPECT_EQ(redictReaderFeed(reader, filtered.data(), filtered.size()), REDICT_OK);
  void* raw = nullptr;
  EXPECT_EQ(redictReaderGetReply(reader, &raw), REDICT_OK);
  redictReaderFree(reader);
  if (raw == nullptr) return {};
  const redis::Reply reply(static_cast<redictReply*>(raw));
  auto entries = parseEntries(reply.view());
  EXPECT_TRUE(entries.ok()) << entries.error().message;
  return entries.ok() ? *entries : std::vector<StreamEntry>{};
}

TEST(CutMessage, AnEntryWithinTheLimitsIsReadWhole) {
  const auto entries = readThroughLimits({"event", R"({"a":1})", "traceparent", "t"});
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].valueOf("event"), R"({"a":1})");
  EXPECT_TRUE(entries[0].cut.empty());
  EXPECT_EQ(decodeMessage(entries[0], kMax).kind, DecodedMessage::Kind::kEvent);
}

TEST(CutMessage, ACutEventIsOversizedWithItsFirstBytesAndTrueSize) {
  const std::string event = R"({"pad":")" + std::string(5000, 'x') + R"("})";
  const auto entries = readThroughLimits({"event", event, "other", "kept"});
  ASSERT_EQ(entries.size(), 1u);
  ASSERT_EQ(entries[0].cut.size(), 1u);
  EXPECT_EQ(entries[0].cut[0].first, "event");
  EXPECT_EQ(entries[0].cut[0].second, event.size());
  EXPECT_EQ(entries[0].valueOf("event").size(), invocation::kKeptValueBytes);
  EXPECT_EQ(entries[0].valueOf("other"), "kept");
  const DecodedMessage decoded = decodeMessage(entries[0], kMax);
  EXPECT_EQ(decoded.kind, DecodedMessage::Kind::kOversized);
  EXPECT_EQ(decoded.reason, "oversized: event is 5010 bytes, over MAX_EVENT_BYTES 1KiB");
  EXPECT_EQ(decoded.dlq_event, event.substr(0, 256) + "... (5010 bytes, truncated)");
}

TEST(CutMessage, AnotherCutFieldMakesTheMessageOversizedToo) {
  const auto entries = readThroughLimits({"event", "{}", "junk", std::string(3000, 'j')});
  ASSERT_EQ(entries.size(), 1u);
  const DecodedMessage decoded = decodeMessage(entries[0], kMax);
  EXPECT_EQ(decoded.kind, DecodedMessage::Kind::kOversized);
  EXPECT_EQ(decoded.reason,
            "oversized: field \"junk\" is 3000 bytes, over what a message may hold "
            "(MAX_EVENT_BYTES 1KiB a value, twice that in all)");
  EXPECT_EQ(decoded.dlq_event, "{}");
}

TEST(CutMessage, TooManyFieldsMakeTheMessageOversized) {
  std::vector<std::string> fields = {"event", "{}"};
  for (int i = 0; i < 3000; ++i) fields.insert(fields.end(), {"f" + std::to_string(i), "v"});
  const auto entries = readThroughLimits(fields);
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].items_when_dropped, 6002u);
  EXPECT_EQ(entries[0].fields.size(), invocation::kMaxMessageItems / 2);
  EXPECT_EQ(decodeMessage(entries[0], kMax).reason,
            "oversized: the message has 3001 fields, over 2048");
}

// A message without `event` is malformed; the DLQ keeps what it did have (issue 29: it kept
// nothing).
TEST(CutMessage, AMessageWithoutEventKeepsItsFieldsInTheDlqRecord) {
  invocation::Message message;
  message.id = "9-0";
  message.fields = {{"evnt", R"({"kind":"order"})"}, {"source", "line\nbreak"}};
  const DecodedMessage decoded = decodeMessage(message, kMax);
  EXPECT_EQ(decoded.kind, DecodedMessage::Kind::kMalformed);
  EXPECT_EQ(decoded.reason, "malformed: the message has no event field");
  EXPECT_EQ(decoded.dlq_event, R"({"evnt":"{\"kind\":\"order\"}","source":"line\nbreak"})");
  message.fields.assign(100, {"field", std::string(100, 'v')});
  const std::string cut = decodeMessage(message, kMax).dlq_event;
  EXPECT_LE(cut.size(), kMax + 64);
  EXPECT_NE(cut.find("... (100 fields, "), std::string::npos) << cut;
}

}  // namespace
}  // namespace relay::catalog
