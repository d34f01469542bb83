#include "catalog/schedule_admission.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "common/rfc3339.h"

namespace relay::catalog {
namespace {

using Verdict = ScheduleAdmission::Verdict;

WallTime at(std::string_view text) {
  const auto instant = parseRfc3339(text);
  EXPECT_TRUE(instant.has_value()) << text;
  return WallTime{std::chrono::seconds(instant ? instant->seconds : 0)};
}

app::Schedule scheduleOf(const char* name, const char* cron, const char* zone,
                         const char* handler) {
  return app::Schedule{.name = name,
                       .cron_text = cron,
                       .cron = schedule::CronExpression::parse(cron).value(),
                       .time_zone = schedule::TimeZone::load(zone).value(),
                       .handler = handler};
}

/// Apps `reports` (nightly at 03:00 Berlin, every-minute `tick`) and `broken` (a directory
/// whose template never loaded).
app::Snapshot snapshot() {
  auto reports = std::make_shared<app::App>();
  reports->name = "reports";
  reports->schedules.push_back(
      scheduleOf("nightly", "0 3 * * *", "Europe/Berlin", "bin/nightly.sh"));
  reports->schedules.push_back(scheduleOf("tick", "* * * * *", "UTC", "bin/tick.sh"));
  std::vector<app::AppEntry> apps(2);
  apps[0].name = "broken";
  apps[1].name = "reports";
  apps[1].app = reports;
  apps[1].status = {true, true, "", {}};
  return app::Snapshot("/apps", std::move(apps), {}, 1);
}

invocation::Message entryOf(const std::string& envelope, std::optional<std::string> event) {
  invocation::Message entry;
  entry.id = "1-0";
  entry.fields.emplace_back("relay_schedule", envelope);
  if (event) entry.fields.emplace_back("event", *event);
  return entry;
}

invocation::Message occurrenceEntry(const schedule::Occurrence& occurrence) {
  return entryOf(occurrence.envelope(), occurrence.payload(R"({"kind":"nightly"})"));
}

// 03:00 CEST on 2024-05-16.
const schedule::Occurrence kNightly{"reports", "nightly", at("2024-05-16T01:00:00Z")};

TEST(AdmitSchedule, AdmitsARealOccurrenceOfAnExistingSchedule) {
  const app::Snapshot apps = snapshot();
  const ScheduleAdmission admission = admitSchedule(apps, occurrenceEntry(kNightly), 1 << 20);
  ASSERT_EQ(admission.verdict, Verdict::kRun) << admission.reason;
  ASSERT_NE(admission.app, nullptr);
  EXPECT_EQ(admission.app->name, "reports");
  ASSERT_NE(admission.schedule, nullptr);
  EXPECT_EQ(admission.schedule->handler, "bin/nightly.sh");
  EXPECT_EQ(admission.occurrence, kNightly);
}

TEST(AdmitSchedule, AScheduleOrAppThatNoLongerExistsIsObsolete) {
  const app::Snapshot apps = snapshot();
  const std::vector<std::pair<schedule::Occurrence, std::string>> cases = {
      {{"gone", "nightly", kNightly.scheduled_at}, "app \"gone\" is not loaded"},
      {{"broken", "nightly", kNightly.scheduled_at}, "app \"broken\" is not loaded"},
      {{"reports", "weekly", kNightly.scheduled_at}, "app \"reports\" has no schedule \"weekly\""},
  };
  for (const auto& [occurrence, reason] : cases) {
    const ScheduleAdmission admission = admitSchedule(apps, occurrenceEntry(occurrence), 1 << 20);
    EXPECT_EQ(admission.verdict, Verdict::kObsolete) << occurrence.id();
    EXPECT_EQ(admission.reason, reason);
  }
}

TEST(AdmitSchedule, AMalformedEnvelopeIsDeadLetteredWithoutAnApp) {
  const app::Snapshot apps = snapshot();
  const std::string payload = kNightly.payload("{}");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{not json", "relay_schedule: not valid JSON"},
      {"[]", "relay_schedule: is array, expected a JSON object"},
      {R"({"app":"reports","schedule":"nightly","scheduled_at":"2024-05-16T01:00:00Z"})",
       "relay_schedule: no \"occurrence_id\" member"},
      {R"({"app":"reports","schedule":"nightly","scheduled_at":"2024-05-16T01:00:00Z",)"
       R"("occurrence_id":"schedule:reports:nightly:2024-05-17T01:00:00Z"})",
       "does not match"},
      {R"({"app":"reports","schedule":"nightly","scheduled_at":"2024-05-16T03:00:00+02:00",)"
       R"("occurrence_id":"schedule:reports:nightly:2024-05-16T03:00:00+02:00"})",
       "is not RFC 3339 UTC in whole seconds"},
      {schedule::Occurrence{"Reports", "nightly", kNightly.scheduled_at}.envelope(),
       "is not a valid name"},
      {schedule::Occurrence{"reports", "a:b", kNightly.scheduled_at}.envelope(),
       "is not a valid name"},
  };
  for (const auto& [envelope, why] : cases) {
    const ScheduleAdmission admission = admitSchedule(apps, entryOf(envelope, payload), 1 << 20);
    EXPECT_EQ(admission.verdict, Verdict::kMalformed) << envelope;
    EXPECT_EQ(admission.reason.rfind("malformed schedule occurrence: ", 0), 0u) << admission.reason;
    EXPECT_NE(admission.reason.find(why), std::string::npos) << admission.reason;
    EXPECT_EQ(admission.app, nullptr);
    EXPECT_EQ(admission.dlq_event, payload);
  }
}

TEST(AdmitSchedule, AScheduledAtThatIsNotAFiringIsSetApartAndAttributed) {
  const app::Snapshot apps = snapshot();
  for (const char* forged : {"2024-05-16T02:00:00Z", "2024-05-16T03:00:00Z", "2024-05-16T01:00:01Z",
                             "2024-05-16T01:01:00Z"}) {
    const schedule::Occurrence occurrence{"reports", "nightly", at(forged)};
    const ScheduleAdmission admission = admitSchedule(apps, occurrenceEntry(occurrence), 1 << 20);
    // Malformed unless Relay published it under another cron (RegistryCatalog asks Redis).
    EXPECT_EQ(admission.verdict, Verdict::kNotAFiring) << forged;
    EXPECT_EQ(admission.reason, "malformed schedule occurrence: scheduled_at " +
                                    occurrence.scheduledAtText() +
                                    " is not a firing of cron \"0 3 * * *\" in Europe/Berlin");
    ASSERT_NE(admission.app, nullptr);
    ASSERT_NE(admission.schedule, nullptr);
    EXPECT_EQ(admission.schedule->handler, "bin/nightly.sh");
  }
}

TEST(AdmitSchedule, TheSecondPassOfARepeatedHourIsNotAFiring) {
  auto app = std::make_shared<app::App>();
  app->name = "reports";
  app->schedules.push_back(scheduleOf("late", "30 2 * * *", "Europe/Berlin", "bin/late.sh"));
  std::vector<app::AppEntry> entries(1);
  entries[0].name = "reports";
  entries[0].app = app;
  const app::Snapshot apps("/apps", std::move(entries), {}, 1);
  // 2024-10-27 02:30 Berlin happens at 00:30Z (CEST) and again at 01:30Z (CET).
  const schedule::Occurrence first{"reports", "late", at("2024-10-27T00:30:00Z")};
  const schedule::Occurrence second{"reports", "late", at("2024-10-27T01:30:00Z")};
  EXPECT_EQ(admitSchedule(apps, occurrenceEntry(first), 1 << 20).verdict, Verdict::kRun);
  EXPECT_EQ(admitSchedule(apps, occurrenceEntry(second), 1 << 20).verdict, Verdict::kNotAFiring);
}

TEST(AdmitSchedule, TheEventFieldMustBeThisOccurrencesPayload) {
  const app::Snapshot apps = snapshot();
  const std::string envelope = kNightly.envelope();
  const schedule::Occurrence other_minute{"reports", "nightly", at("2024-05-15T01:00:00Z")};
  const std::vector<std::pair<std::optional<std::string>, std::string>> cases = {
      {std::nullopt, "malformed schedule occurrence: no event field"},
      {"{broken", "malformed schedule occurrence: event: malformed: "},
      {"[1]", "malformed schedule occurrence: event: malformed: "},
      {R"({"app":"reports","schedule":"nightly","scheduled_at":"2024-05-16T01:00:00Z"})",
       "event has no \"source\" member"},
      {R"({"source":"producer","app":"reports","schedule":"nightly",)"
       R"("scheduled_at":"2024-05-16T01:00:00Z"})",
       "event \"source\" does not match the envelope (expected \"relay.schedule\")"},
      {other_minute.payload("{}"), "event \"scheduled_at\" does not match the envelope"},
      {schedule::Occurrence{"reports", "tick", kNightly.scheduled_at}.payload("{}"),
       "event \"schedule\" does not match the envelope"},
  };
  for (const auto& [event, why] : cases) {
    const ScheduleAdmission admission = admitSchedule(apps, entryOf(envelope, event), 1 << 20);
    EXPECT_EQ(admission.verdict, Verdict::kMalformed) << event.value_or("<none>");
    EXPECT_NE(admission.reason.find(why), std::string::npos) << admission.reason;
    EXPECT_NE(admission.app, nullptr) << "the app is known, the DLQ entry names it";
  }
}

TEST(AdmitSchedule, AnOversizedEventIsMalformedAndSummarised) {
  const app::Snapshot apps = snapshot();
  const std::string big = kNightly.payload(R"({"pad":")" + std::string(4000, 'x') + "\"}");
  const ScheduleAdmission admission = admitSchedule(apps, entryOf(kNightly.envelope(), big), 1024);
  EXPECT_EQ(admission.verdict, Verdict::kMalformed);
  EXPECT_NE(admission.reason.find("oversized: event is " + std::to_string(big.size())),
            std::string::npos)
      << admission.reason;
  EXPECT_LT(admission.dlq_event.size(), 400u);
}

TEST(AdmitSchedule, ChecksTheCurrentCronNotTheOneThatPublished) {
  // Published for 03:00 Berlin; the template now says 04:00.
  auto app = std::make_shared<app::App>();
  app->name = "reports";
  app->schedules.push_back(scheduleOf("nightly", "0 4 * * *", "Europe/Berlin", "bin/v2.sh"));
  std::vector<app::AppEntry> entries(1);
  entries[0].name = "reports";
  entries[0].app = app;
  const app::Snapshot apps("/apps", std::move(entries), {}, 1);
  EXPECT_EQ(admitSchedule(apps, occurrenceEntry(kNightly), 1 << 20).verdict, Verdict::kNotAFiring);
  const schedule::Occurrence four{"reports", "nightly", at("2024-05-16T02:00:00Z")};
  const ScheduleAdmission admission = admitSchedule(apps, occurrenceEntry(four), 1 << 20);
  ASSERT_EQ(admission.verdict, Verdict::kRun) << admission.reason;
  EXPECT_EQ(admission.schedule->handler, "bin/v2.sh");
}

}  // namespace
}  // namespace relay::catalog
