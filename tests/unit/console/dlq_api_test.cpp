// The Dead letters API's pure parts: the filter parsed from a request, the rows and the detail
// the page renders.
#include "console/dlq_api.h"

#include <gtest/gtest.h>

#include <map>

namespace relay::console {
namespace {

ParamGetter params(std::map<std::string, std::string> values) {
  return [values](std::string_view name) -> std::optional<std::string> {
    const auto found = values.find(std::string(name));
    if (found == values.end()) return std::nullopt;
    return found->second;
  };
}

invocation::Message handlerRecord(std::string event = R"({"order":"A-1"})") {
  return {"1790000000123-0",
          {{"original_id", "1789999999000-0"},
           {"event", std::move(event)},
           {"reason", "exit 3"},
           {"kind", "handler"},
           {"app", "shop"},
           {"handler", "bin/pay.sh"},
           {"handler_attempts", "5"},
           {"timestamp", "2026-09-21T10:00:00.123Z"}}};
}

dlq::Entry handlerEntry(std::string event = R"({"order":"A-1"})") {
  return dlq::Entry::from(handlerRecord(std::move(event)));
}

TEST(ParseDlqFilter, ReadsEveryParameterAndLeavesEmptyOnesOut) {
  auto filter = parseDlqFilter(params({{"app", "shop"},
                                       {"handler", ""},
                                       {"kind", "handler"},
                                       {"reason", "exit"},
                                       {"q", "A-1"},
                                       {"since", "2026-09-21T10:00:00Z"},
                                       {"until", "1790000000999"}}));
  ASSERT_TRUE(filter.ok()) << filter.error().message;
  EXPECT_EQ(filter->app, "shop");
  EXPECT_EQ(filter->handler, "");
  EXPECT_EQ(filter->kind, dlq::DlqKind::kHandler);
  EXPECT_EQ(filter->reason, "exit");
  EXPECT_EQ(filter->text, "A-1");
  EXPECT_EQ(filter->since_ms, 1789984800000);  // 2026-09-21T10:00:00Z
  EXPECT_EQ(filter->until_ms, 1790000000999);
}

TEST(ParseDlqFilter, TimesWithAnOffsetAreInstants) {
  auto filter = parseDlqFilter(params({{"since", "2026-09-21T12:00:00.5+02:00"}}));
  ASSERT_TRUE(filter.ok());
  auto utc = parseDlqFilter(params({{"since", "2026-09-21T10:00:00.500Z"}}));
  ASSERT_TRUE(utc.ok());
  EXPECT_EQ(filter->since_ms, utc->since_ms);
}

TEST(ParseDlqFilter, BadValuesNameTheParameter) {
  auto kind = parseDlqFilter(params({{"kind", "exit"}}));
  ASSERT_FALSE(kind.ok());
  EXPECT_EQ(kind.error().message.rfind("kind: ", 0), 0u);
  auto since = parseDlqFilter(params({{"since", "yesterday"}}));
  ASSERT_FALSE(since.ok());
  EXPECT_EQ(since.error().message.rfind("since: expected an RFC 3339 time", 0), 0u);
  auto until = parseDlqFilter(params({{"until", "2026-09-21"}}));
  ASSERT_FALSE(until.ok());
  EXPECT_EQ(until.error().message.rfind("until: ", 0), 0u);
}

TEST(DeadLetterSummary, GivesTheRowTheTableShows) {
  const Json row = deadLetterSummary(handlerEntry(std::string(300, 'x')));
  EXPECT_EQ(row["id"], "1790000000123-0");
  EXPECT_EQ(row["app"], "shop");
  EXPECT_EQ(row["kind"], "handler");
  EXPECT_EQ(row["attempts"], 5);
  EXPECT_EQ(row["event_preview"].get<std::string>().size(), 160u);
  EXPECT_EQ(row["event_bytes"], 300);
}

TEST(DeadLetterDetail, PrettyPrintsJsonAndKeepsTheAttemptsOfItsOwnHandler) {
  std::vector<invocation::AttemptRecord> journal(3);
  journal[0] = {"shop", "bin/pay.sh", 1, "w1", 10, 20, "failed", "exit 3", 10};
  journal[1] = {"shop", "bin/other.sh", 1, "w1", 10, 20, "succeeded", "", 10};
  journal[2] = {"shop", "bin/pay.sh", 2, "w2", 30, 45, "failed", "exit 3", 15};
  const Json detail = deadLetterDetail(handlerEntry(), journal);
  EXPECT_EQ(detail["event_pretty"], "{\n  \"order\": \"A-1\"\n}");
  EXPECT_EQ(detail["replayable"], true);
  ASSERT_EQ(detail["attempts_history"].size(), 2u);
  EXPECT_EQ(detail["attempts_history"][1]["consumer"], "w2");
  EXPECT_EQ(detail["attempts_history"][1]["duration_ms"], 15);
  EXPECT_EQ(detail["fields"]["original_id"], "1789999999000-0");
}

TEST(DeadLetterDetail, AMalformedEntryIsNotReplayableAndItsEventStaysRaw) {
  invocation::Message malformed = handlerRecord("{not json <script>");
  for (auto& [name, value] : malformed.fields) {
    if (name == "kind") value = "malformed";
    if (name == "app" || name == "handler") value = "-";
  }
  const Json detail = deadLetterDetail(dlq::Entry::from(std::move(malformed)), {});
  EXPECT_EQ(detail["replayable"], false);
  EXPECT_NE(detail["not_replayable_because"].get<std::string>().find("a malformed message"),
            std::string::npos);
  EXPECT_TRUE(detail["event_pretty"].is_null());
  EXPECT_EQ(detail["event"], "{not json <script>");
}

}  // namespace
}  // namespace relay::console
