// A dead-letter entry read back: parsed once (Entry::from). Its kind decides whether it can be
// replayed: the recorded field, or for entries without one, their structure (never the reason
// text).
#include "dlq/entry.h"

#include <gtest/gtest.h>

namespace relay::dlq {
namespace {

Entry entry(std::vector<std::pair<std::string, std::string>> fields) {
  return Entry::from({"1-0", std::move(fields)});
}

DlqKind kindOf(const Entry& entry) { return entry.kind; }

TEST(DlqKind, TheRecordedKindWins) {
  EXPECT_EQ(kindOf(entry({{"kind", "handler"}, {"app", "shop"}, {"handler", "h"}})),
            DlqKind::kHandler);
  EXPECT_EQ(kindOf(entry({{"kind", "oversized"}, {"app", "shop"}, {"handler", "h"}})),
            DlqKind::kOversized);
  EXPECT_EQ(kindOf(entry({{"kind", "schedule"},
                          {"app", "shop"},
                          {"handler", "jobs.report"},
                          {"handler_attempts", "0"}})),
            DlqKind::kSchedule);
}

TEST(DlqKind, AHandlerKindThatNamesNoHandlerIsNotAHandlerEntry) {
  EXPECT_EQ(kindOf(entry({{"kind", "handler"}, {"app", "-"}, {"handler", "-"}})),
            DlqKind::kMalformed);
  EXPECT_EQ(kindOf(entry({{"kind", "handler"}, {"app", "shop"}})), DlqKind::kMalformed);
}

TEST(DlqKind, AnUnknownRecordedKindIsNotAHandlerEntry) {
  EXPECT_EQ(kindOf(entry({{"kind", "future"}, {"app", "shop"}, {"handler", "h"}})),
            DlqKind::kMalformed);
}

TEST(DlqKind, EntriesWithoutAKindAreJudgedByTheirStructure) {
  EXPECT_EQ(kindOf(entry({{"app", "shop"}, {"handler", "bin/x"}, {"handler_attempts", "5"}})),
            DlqKind::kHandler);
  EXPECT_EQ(kindOf(entry({{"app", "-"}, {"handler", "-"}, {"handler_attempts", "0"}})),
            DlqKind::kMalformed);
  // A schedule occurrence dead-lettered before Relay recorded kinds: names known, no attempt.
  EXPECT_EQ(kindOf(entry({{"app", "shop"}, {"handler", "jobs.x"}, {"handler_attempts", "0"}})),
            DlqKind::kMalformed);
  EXPECT_EQ(kindOf(entry({{"app", "shop"}, {"handler", "-"}, {"handler_attempts", "3"}})),
            DlqKind::kMalformed);
  EXPECT_EQ(kindOf(entry({{"reason", "exit 3"}})), DlqKind::kMalformed);
}

TEST(DlqKind, NamesRoundTrip) {
  for (DlqKind kind : {DlqKind::kHandler, DlqKind::kMalformed, DlqKind::kOversized,
                       DlqKind::kSchedule, DlqKind::kOperator}) {
    EXPECT_EQ(parseKind(kindName(kind)), kind);
  }
  EXPECT_EQ(parseKind("Handler"), std::nullopt);
}

TEST(EntryRefusal, OnlyHandlerEntriesAreReplayable) {
  EXPECT_EQ(entry({{"kind", "handler"}, {"app", "shop"}, {"handler", "h"}}).refusal(),
            std::nullopt);
  const auto oversized =
      entry({{"kind", "oversized"}, {"reason", "oversized: 300000 bytes"}}).refusal();
  ASSERT_TRUE(oversized);
  EXPECT_NE(oversized->find("an oversized message that never reached a handler "
                            "(oversized: 300000 bytes)"),
            std::string::npos)
      << *oversized;
  const auto schedule =
      entry({{"kind", "schedule"}, {"app", "-"}, {"handler", "-"}, {"reason", "bad id"}}).refusal();
  ASSERT_TRUE(schedule);
  EXPECT_NE(schedule->find("a malformed schedule occurrence"), std::string::npos);
}

TEST(EntryRefusal, AnOperatorEntryIsReplayableWhenItNamesAHandler) {
  const Entry named = entry({{"kind", "operator"}, {"app", "shop"}, {"handler", "bin/pay.sh"}});
  EXPECT_EQ(named.kind, DlqKind::kOperator);
  EXPECT_TRUE(named.replayable());
  EXPECT_EQ(named.refusal(), std::nullopt);
  const Entry unplanned = entry({{"kind", "operator"}, {"app", "-"}, {"handler", "-"}});
  EXPECT_EQ(unplanned.kind, DlqKind::kOperator);
  EXPECT_FALSE(unplanned.replayable());
  const auto refused = unplanned.refusal();
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->find("an operator dead-lettered before it had a plan"), std::string::npos);
}

TEST(Entry, ReadsEveryFieldOnceAndKeepsTheRecord) {
  const Entry read = Entry::from({"1790000000123-0",
                                  {{"original_id", "1789999999000-0"},
                                   {"event", R"({"order":"A-1"})"},
                                   {"reason", "exit 3"},
                                   {"kind", "handler"},
                                   {"app", "shop"},
                                   {"handler", "bin/pay.sh"},
                                   {"handler_attempts", "5"},
                                   {"timestamp", "2026-09-21T10:00:00.123Z"},
                                   {"output_tail", "boom\n"}}});
  EXPECT_EQ(read.id(), "1790000000123-0");
  EXPECT_EQ(read.kind, DlqKind::kHandler);
  EXPECT_EQ(read.handler_attempts, 5);
  EXPECT_EQ(read.app(), "shop");
  EXPECT_EQ(read.handler(), "bin/pay.sh");
  EXPECT_EQ(read.reason(), "exit 3");
  EXPECT_EQ(read.event(), R"({"order":"A-1"})");
  EXPECT_EQ(read.originalId(), "1789999999000-0");
  EXPECT_EQ(read.timestamp(), "2026-09-21T10:00:00.123Z");
  ASSERT_NE(read.outputTail(), nullptr);
  EXPECT_EQ(*read.outputTail(), "boom\n");
  EXPECT_EQ(read.record.fields.size(), 9u);
}

TEST(Entry, MissingFieldsReadAsEmptyAndALooseCountAsWhatItStartsWith) {
  const Entry bare = entry({});
  EXPECT_EQ(bare.app(), "");
  EXPECT_EQ(bare.handler_attempts, 0);
  EXPECT_EQ(bare.outputTail(), nullptr);
  EXPECT_EQ(entry({{"handler_attempts", "3 attempts"}}).handler_attempts, 3);
  EXPECT_EQ(entry({{"handler_attempts", "many"}}).handler_attempts, 0);
}

// docs/schedules.md "Rolling deploys and cron edits": an occurrence set apart whose schedule was
// known names its handler, which can run it.
TEST(EntryRefusal, AScheduleEntryNamingAHandlerIsReplayableWhenItsEventIsAnObject) {
  const auto named = [](std::string event) {
    return entry({{"event", std::move(event)},
                  {"reason", "malformed schedule occurrence: not a firing"},
                  {"kind", "schedule"},
                  {"app", "reports"},
                  {"handler", "bin/nightly.sh"},
                  {"handler_attempts", "0"}});
  };
  EXPECT_EQ(named(R"({"source":"relay.schedule"})").refusal(), std::nullopt);
  for (const char* event : {"{broken", "[1]", R"({"source":"relay.sched... (300000 bytes))"}) {
    const auto refused = named(event).refusal();
    ASSERT_TRUE(refused) << event;
    EXPECT_NE(refused->find("whose recorded event is not a JSON object"), std::string::npos)
        << *refused;
  }
}

}  // namespace
}  // namespace relay::dlq
