// The kind of a dead-letter entry decides whether it can be replayed: the recorded field, or
// for entries without one, their structure (never the reason text).
#include "dlq/dlq_kind.h"

#include <gtest/gtest.h>

#include "dlq/replayer.h"

namespace relay::dlq {
namespace {

stream::StreamEntry entry(std::vector<std::pair<std::string, std::string>> fields) {
  return {"1-0", std::move(fields)};
}

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
  for (DlqKind kind :
       {DlqKind::kHandler, DlqKind::kMalformed, DlqKind::kOversized, DlqKind::kSchedule}) {
    EXPECT_EQ(parseKind(kindName(kind)), kind);
  }
  EXPECT_EQ(parseKind("Handler"), std::nullopt);
}

TEST(ReplayerRefusal, OnlyHandlerEntriesAreReplayable) {
  EXPECT_EQ(Replayer::refusal(entry({{"kind", "handler"}, {"app", "shop"}, {"handler", "h"}})),
            std::nullopt);
  const auto oversized =
      Replayer::refusal(entry({{"kind", "oversized"}, {"reason", "oversized: 300000 bytes"}}));
  ASSERT_TRUE(oversized);
  EXPECT_NE(oversized->find("an oversized message that never reached a handler "
                            "(oversized: 300000 bytes)"),
            std::string::npos)
      << *oversized;
  const auto schedule = Replayer::refusal(entry({{"kind", "schedule"}, {"reason", "bad id"}}));
  ASSERT_TRUE(schedule);
  EXPECT_NE(schedule->find("a malformed schedule occurrence"), std::string::npos);
}

}  // namespace
}  // namespace relay::dlq
