// A replay's record (docs/replay.md "State in Redis"): its fields read back as written, and its
// progress by the time in the ids.
#include "history/replay_record.h"

#include <gtest/gtest.h>

#include <map>

namespace relay::history {
namespace {

std::map<std::string, std::string> asMap(const std::vector<std::string>& fields) {
  std::map<std::string, std::string> map;
  for (std::size_t i = 0; i + 1 < fields.size(); i += 2) map[fields[i]] = fields[i + 1];
  return map;
}

TEST(ReplayRecord, FieldsReadBackAsWritten) {
  ReplaySpec spec;
  spec.app = "audit";
  spec.handler = "bin/h.sh";
  spec.from = "1000-0";
  spec.to = "2000-18446744073709551615";
  spec.filter = "kind: [a]\n";
  spec.rate = 50;
  spec.again = true;
  const ReplayStatus status = replayStatusOf("r-1-abcd", asMap(replayFields("r-1-abcd", spec, 7)));
  EXPECT_EQ(status.id, "r-1-abcd");
  EXPECT_EQ(status.state, "running");
  EXPECT_EQ(status.created_ms, 7);
  EXPECT_EQ(status.spec.source, ReplaySpec::Source::kStream);
  EXPECT_EQ(status.spec.app, "audit");
  EXPECT_EQ(status.spec.handler, "bin/h.sh");
  EXPECT_EQ(status.spec.from, spec.from);
  EXPECT_EQ(status.spec.to, spec.to);
  EXPECT_EQ(status.spec.filter, spec.filter);
  EXPECT_EQ(status.spec.rate, 50);
  EXPECT_TRUE(status.spec.again);
  EXPECT_EQ(status.published, 0);
  EXPECT_FALSE(status.finished());

  ReplaySpec dlq;
  dlq.source = ReplaySpec::Source::kDeadLetters;
  dlq.dlq_filter = R"({"app":"audit"})";
  dlq.upto = "5-0";
  dlq.expected = 4;
  const ReplayStatus back = replayStatusOf("r-2-0000", asMap(replayFields("r-2-0000", dlq, 1)));
  EXPECT_EQ(back.spec.source, ReplaySpec::Source::kDeadLetters);
  EXPECT_EQ(back.spec.dlq_filter, dlq.dlq_filter);
  EXPECT_EQ(back.spec.upto, "5-0");
  EXPECT_EQ(back.spec.expected, 4);
}

TEST(ReplayRecord, ProgressFollowsTheCursorThroughTheWindow) {
  ReplayStatus status;
  status.state = "running";
  status.spec.from = "1000-0";
  status.spec.to = "2000-0";
  EXPECT_EQ(status.progress(), 0.0);
  status.cursor = "1250-3";
  EXPECT_DOUBLE_EQ(status.progress(), 0.25);
  status.cursor = "3000-0";
  EXPECT_DOUBLE_EQ(status.progress(), 1.0);
  status.state = "done";
  status.cursor.clear();
  EXPECT_EQ(status.progress(), 1.0);
  ReplayStatus dlq;
  dlq.state = "running";
  dlq.spec.source = ReplaySpec::Source::kDeadLetters;
  dlq.spec.expected = 4;
  dlq.published = 1;
  dlq.skipped = 1;
  EXPECT_DOUBLE_EQ(dlq.progress(), 0.5);
}

TEST(ReplayRecord, IdsCarryTheirTimeAndFourHexDigits) {
  EXPECT_EQ(newReplayId(1700000000000, 0xabcdef12), "r-1700000000000-ef12");
  EXPECT_EQ(newReplayId(5, 1), "r-5-0001");
}

// Garbage in a record (hand-edited) reads as zeros and empty strings, never a crash.
TEST(ReplayRecord, AHandEditedRecordReadsLeniently) {
  const ReplayStatus status =
      replayStatusOf("x", {{"published", "many"}, {"rate", "fast"}, {"source", "?"}});
  EXPECT_EQ(status.published, 0);
  EXPECT_EQ(status.spec.rate, 0);
  EXPECT_EQ(status.spec.source, ReplaySpec::Source::kStream);
  EXPECT_EQ(status.progress(), 0.0);
}

}  // namespace
}  // namespace relay::history
