#include "schedule/occurrence.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "unit/schedule/time_text.h"

namespace relay::schedule {
namespace {

using testing::at;

Occurrence nightly() { return {"reports", "nightly-report", at("2024-05-16T01:00:00Z")}; }

std::string envelopeWith(const std::string& members) { return "{" + members + "}"; }

TEST(Occurrence, IdNamesAppScheduleAndUtcSecond) {
  EXPECT_EQ(nightly().scheduledAtText(), "2024-05-16T01:00:00Z");
  EXPECT_EQ(nightly().id(), "schedule:reports:nightly-report:2024-05-16T01:00:00Z");
}

TEST(Occurrence, EnvelopeHoldsExactlyTheFourIdentityMembers) {
  EXPECT_EQ(nightly().envelope(),
            R"({"app":"reports","schedule":"nightly-report","scheduled_at":"2024-05-16T01:00:00Z",)"
            R"("occurrence_id":"schedule:reports:nightly-report:2024-05-16T01:00:00Z"})");
}

TEST(Occurrence, PayloadCarriesTheTemplatePayloadVerbatim) {
  EXPECT_EQ(nightly().payload(R"({"kind":"nightly","n":1.50,"quoted":"1"})"),
            R"({"source":"relay.schedule","app":"reports","schedule":"nightly-report",)"
            R"("scheduled_at":"2024-05-16T01:00:00Z","payload":{"kind":"nightly","n":1.50,)"
            R"("quoted":"1"}})");
}

TEST(Occurrence, PayloadDefaultsToAnEmptyObject) {
  EXPECT_EQ(nightly().payload(""),
            R"({"source":"relay.schedule","app":"reports","schedule":"nightly-report",)"
            R"("scheduled_at":"2024-05-16T01:00:00Z","payload":{}})");
}

TEST(ParseEnvelope, ReadsBackWhatEnvelopeWrites) {
  const auto parsed = parseEnvelope(nightly().envelope());
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(*parsed, nightly());
}

TEST(ParseEnvelope, IgnoresMembersItDoesNotKnow) {
  const auto parsed =
      parseEnvelope(R"({"trace":"x","app":"reports","schedule":"nightly-report","scheduled_at":)"
                    R"("2024-05-16T01:00:00Z","occurrence_id":"schedule:reports:nightly-report:)"
                    R"(2024-05-16T01:00:00Z"})");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(*parsed, nightly());
}

TEST(ParseEnvelope, RejectsWhatIsNotAJsonObject) {
  for (const char* text : {"", "{", "not json", "[1,2]", "\"text\"", "null", "{\"app\":}"}) {
    const auto parsed = parseEnvelope(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.error().kind, ErrorKind::kInvalidArgument);
  }
  EXPECT_NE(parseEnvelope("[1,2]").error().message.find("expected a JSON object"),
            std::string::npos)
      << parseEnvelope("[1,2]").error().message;
  EXPECT_NE(parseEnvelope("{").error().message.find("not valid JSON"), std::string::npos);
}

TEST(ParseEnvelope, NamesAMissingMember) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"("schedule":"s","scheduled_at":"2024-05-16T01:00:00Z","occurrence_id":"x")", "\"app\""},
      {R"("app":"a","scheduled_at":"2024-05-16T01:00:00Z","occurrence_id":"x")", "\"schedule\""},
      {R"("app":"a","schedule":"s","occurrence_id":"x")", "\"scheduled_at\""},
      {R"("app":"a","schedule":"s","scheduled_at":"2024-05-16T01:00:00Z")", "\"occurrence_id\""},
  };
  for (const auto& [members, name] : cases) {
    const auto parsed = parseEnvelope(envelopeWith(members));
    ASSERT_FALSE(parsed.ok()) << members;
    EXPECT_EQ(parsed.error().message, "no " + name + " member");
  }
}

TEST(ParseEnvelope, RejectsMembersThatAreNotStrings) {
  const auto parsed = parseEnvelope(
      R"({"app":7,"schedule":"s","scheduled_at":"2024-05-16T01:00:00Z","occurrence_id":"x"})");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().message, "\"app\" is number, expected a string");
  const auto null_id = parseEnvelope(
      R"({"app":"a","schedule":"s","scheduled_at":"2024-05-16T01:00:00Z","occurrence_id":null})");
  ASSERT_FALSE(null_id.ok());
  EXPECT_EQ(null_id.error().message, "\"occurrence_id\" is null, expected a string");
}

TEST(ParseEnvelope, RejectsAnIdThatDoesNotRecompute) {
  for (const char* id : {"schedule:reports:nightly-report:2024-05-16T02:00:00Z",
                         "schedule:reports:other:2024-05-16T01:00:00Z",
                         "reports:nightly-report:2024-05-16T01:00:00Z", ""}) {
    const auto parsed = parseEnvelope(
        R"({"app":"reports","schedule":"nightly-report","scheduled_at":"2024-05-16T01:00:00Z",)"
        R"("occurrence_id":")" +
        std::string(id) + "\"}");
    ASSERT_FALSE(parsed.ok()) << id;
    EXPECT_NE(parsed.error().message.find("does not match"), std::string::npos)
        << parsed.error().message;
  }
}

TEST(ParseEnvelope, AcceptsOnlyWholeSecondUtcSpelledOneWay) {
  // Each denotes a valid instant (or nearly), but only `YYYY-MM-DDTHH:MM:SSZ` is the identity.
  for (const char* at_text :
       {"2024-05-16T03:00:00+02:00", "2024-05-16T01:00:00.000Z", "2024-05-16T01:00:00.5Z",
        "2024-05-16t01:00:00z", "2024-05-16T01:00:00", "2024-05-16", "2024-05-16T01:00:60Z",
        "2024-02-30T01:00:00Z", "9999-12-31T23:59:59Z", "tomorrow"}) {
    // The id is recomputed from the same text, so only scheduled_at can be at fault.
    const std::string text =
        R"({"app":"reports","schedule":"nightly-report","scheduled_at":")" + std::string(at_text) +
        R"(","occurrence_id":"schedule:reports:nightly-report:)" + at_text + "\"}";
    const auto parsed = parseEnvelope(text);
    ASSERT_FALSE(parsed.ok()) << at_text;
    EXPECT_NE(parsed.error().message.find("is not RFC 3339 UTC in whole seconds"),
              std::string::npos)
        << parsed.error().message;
  }
}

}  // namespace
}  // namespace relay::schedule
