// The archive (issue 32, docs/replay.md "Archive") against a real redis-server: what each
// archive keeps (and never: replay copies, schedule occurrences), the original ids, one
// archiver at a time, a repeated batch after a crash, retention on the injected clock, and a
// gap when the stream was trimmed ahead of the archiver.
#include "history/archiver.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <sstream>
#include <thread>
#include <variant>

#include "fakes/fake_clock.h"
#include "history/archive_reader.h"
#include "pattern/pattern_text.h"
#include "stream/stream_id.h"
#include "support/cli_run.h"
#include "support/redis_server.h"

namespace relay::history {
namespace {

using std::chrono::milliseconds;

// The id just before stream entry `id` (an archive gap ends there): the entry before it when
// they share a millisecond, the previous millisecond's largest id when `id` began a new one.
std::string justBefore(const std::string& id) {
  const auto parsed = stream::StreamId::parse(id);
  const auto previous = parsed ? parsed->previous() : std::nullopt;
  return previous ? previous->toString() : std::string("(none before ") + id + ")";
}

std::shared_ptr<const pattern::Pattern> compiled(const std::string& text) {
  auto result = pattern::compileText(text, "test");
  return std::get<std::shared_ptr<const pattern::Pattern>>(std::move(result));
}

// An app entry with one rule matching `rule` and, when `archive` is set, that archive.
app::AppEntry appWith(const std::string& name, const std::string& rule,
                      std::optional<app::Archive> archive) {
  auto app = std::make_shared<app::App>();
  app->name = name;
  app::Rule only;
  only.handler = "bin/h";
  only.pattern = compiled(rule);
  app->rules.push_back(only);
  app->archive = std::move(archive);
  return {name, "/apps/" + name, app, {}, {}, {}};
}

// App `ops`: no archive pattern, its one rule matches `{kind: [b]}`; app `quiet`: no archive;
// app `shop`: archives `{kind: [a]}`.
std::shared_ptr<const app::Snapshot> apps(milliseconds shop_retention = std::chrono::hours(24)) {
  std::vector<app::AppEntry> entries;
  entries.push_back(
      appWith("ops", "{kind: [b]}", app::Archive{std::chrono::hours(24), nullptr, ""}));
  entries.push_back(appWith("quiet", "{kind: [b]}", std::nullopt));
  entries.push_back(appWith("shop", "{kind: [never]}",
                            app::Archive{shop_retention, compiled("{kind: [a]}"), "{}"}));
  return std::make_shared<const app::Snapshot>("/apps", std::move(entries),
                                               std::vector<app::IgnoredDir>{}, 1);
}

class ArchiverTest : public relay::testing::RedisTest {
 protected:
  void SetUp() override {
    RedisTest::SetUp();
    redis_ = server().connect();
    snapshot_ = apps();
  }

  std::unique_ptr<Archiver> make(const std::string& owner,
                                 std::optional<StreamArchive> stream = StreamArchive{
                                     std::chrono::hours(24), nullptr}) {
    ArchiverSettings settings;
    settings.lease = lease_;
    settings.batch = batch_;
    settings.trim_interval = std::chrono::hours(1);
    settings.max_event_bytes = max_event_bytes_;
    return std::make_unique<Archiver>(
        keys_, owner, std::move(stream), [this] { return snapshot_; }, settings, metrics_, logger_,
        clock_);
  }

  // XADD at an explicit id, or `*`: the id.
  std::string add(const std::string& kind, const std::string& id = "*",
                  const std::string& extra_field = "") {
    std::vector<std::string> command = {"XADD", "events", id, "event",
                                        "{\"kind\":\"" + kind + "\"}"};
    if (!extra_field.empty()) {
      command.push_back(extra_field);
      command.push_back("{}");
    }
    auto reply = redis_->command(command);
    EXPECT_TRUE(reply.ok()) << reply.error().message;
    return std::string(*reply->string());
  }

  std::vector<std::string> ids(const std::string& key) {
    std::vector<std::string> out;
    auto reply = redis_->command({"XRANGE", key, "-", "+"});
    auto entries = stream::parseEntries(reply->view());
    for (const auto& entry : *entries) out.push_back(entry.id);
    return out;
  }

  std::string field(const std::string& key, const std::string& name) {
    auto reply = redis_->command({"HGET", key, name});
    auto text = reply->optionalString();
    return text.ok() && text->has_value() ? std::string(**text) : std::string();
  }

  invocation::StreamKeys keys_{"events", "relay"};
  milliseconds lease_{30'000};
  std::size_t batch_ = 200;
  std::size_t max_event_bytes_ = 256 * 1024;
  std::unique_ptr<redis::Connection> redis_;
  std::shared_ptr<const app::Snapshot> snapshot_;
  relay::testing::FakeClock clock_{std::chrono::system_clock::now()};
  observability::Metrics metrics_;
  std::ostringstream log_;
  observability::Logger logger_{log_, clock_};
};

TEST_F(ArchiverTest, EachArchiveKeepsWhatItSelectsUnderTheOriginalIds) {
  const std::string a1 = add("a");
  const std::string b1 = add("b");
  const std::string c1 = add("c");
  add("a", "*", "relay_replay");    // a replay copy: history already
  add("b", "*", "relay_schedule");  // a schedule occurrence: Relay's own publication
  const std::string a2 = add("a");
  auto raw = redis_->command({"XADD", "events", "*", "event", "not json"});
  const std::string malformed(*raw->string());

  auto pass = make("w1")->passOnce(*redis_);
  ASSERT_TRUE(pass.ok()) << pass.error().message;
  EXPECT_TRUE(pass->leader);
  EXPECT_TRUE(pass->caught_up);
  EXPECT_EQ(pass->read, 7u);
  EXPECT_EQ(ids(keys_.appArchive("shop")), (std::vector<std::string>{a1, a2}));
  EXPECT_EQ(ids(keys_.appArchive("ops")), (std::vector<std::string>{b1}));  // by its rule
  EXPECT_EQ(ids(keys_.appArchive("quiet")), std::vector<std::string>{});
  // The stream's archive without a pattern: every entry but the copy and the occurrence.
  EXPECT_EQ(ids(keys_.archive()), (std::vector<std::string>{a1, b1, c1, a2, malformed}));
  EXPECT_EQ(pass->archived, 2u + 1u + 5u);
  EXPECT_EQ(metrics_.value("relay_archived_entries_total", {{"archive", keys_.appArchive("shop")}}),
            2);
  EXPECT_EQ(field(keys_.archiver(), "cursor"), malformed);

  // Fields verbatim, read back in id order through the reader the replay uses.
  auto page = readArchive(*redis_, keys_, "shop", *stream::StreamId::parse(a1),
                          *stream::StreamId::parse(a2), 10);
  ASSERT_TRUE(page.ok()) << page.error().message;
  EXPECT_EQ(page->archive, keys_.appArchive("shop"));
  ASSERT_EQ(page->entries.size(), 2u);
  EXPECT_EQ(page->entries[0].id, a1);
  EXPECT_EQ(page->entries[0].valueOf("event"), "{\"kind\":\"a\"}");
  // An app without an archive of its own reads the stream's.
  auto quiet = readArchive(*redis_, keys_, "quiet", *stream::StreamId::parse(a1),
                           *stream::StreamId::parse(c1), 10);
  ASSERT_TRUE(quiet.ok());
  EXPECT_EQ(quiet->archive, keys_.archive());
  EXPECT_EQ(quiet->entries.size(), 3u);

  // Nothing new: the next pass copies nothing.
  auto again = make("w1")->passOnce(*redis_);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->read, 0u);
  EXPECT_EQ(again->archived, 0u);
}

TEST_F(ArchiverTest, AnEntryOverMaxEventBytesIsLeftOutNotCut) {
  max_event_bytes_ = 64;
  const std::string small = add("a");
  auto big = redis_->command({"XADD", "events", "*", "event",
                              "{\"kind\":\"a\",\"pad\":\"" + std::string(200, 'x') + "\"}"});
  ASSERT_TRUE(big.ok());
  const std::string after = add("a");
  auto pass = make("w1")->passOnce(*redis_);
  ASSERT_TRUE(pass.ok()) << pass.error().message;
  EXPECT_EQ(ids(keys_.appArchive("shop")), (std::vector<std::string>{small, after}));
  EXPECT_EQ(ids(keys_.archive()), (std::vector<std::string>{small, after}));
  EXPECT_NE(log_.str().find("an entry too large to archive was left out"), std::string::npos);
  EXPECT_EQ(field(keys_.archiver(), "cursor"), after);
}

TEST_F(ArchiverTest, WithoutAStreamArchiveOnlyAppArchivesAreWritten) {
  add("a");
  add("c");
  auto pass = make("w1", std::nullopt)->passOnce(*redis_);
  ASSERT_TRUE(pass.ok());
  EXPECT_EQ(ids(keys_.appArchive("shop")).size(), 1u);
  EXPECT_EQ(*redis_->command({"EXISTS", keys_.archive()})->integer(), 0);
  auto page = readArchive(*redis_, keys_, "quiet", {0, 0}, {UINT64_MAX, UINT64_MAX}, 10);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->archive, "");  // no archive keeps quiet's history
}

TEST_F(ArchiverTest, OneWorkerArchivesAtATimeAndAnotherResumesWhereItStopped) {
  lease_ = milliseconds(300);
  batch_ = 2;
  for (int i = 0; i < 3; ++i) add("a");
  auto first = make("w1");
  auto second = make("w2");
  ArchivePass one = *first->passOnce(*redis_);
  EXPECT_TRUE(one.leader);
  ArchivePass refused = *second->passOnce(*redis_);
  EXPECT_FALSE(refused.leader);  // w1's lease runs
  EXPECT_EQ(refused.read, 0u);
  for (int i = 0; i < 3; ++i) add("a");
  // w1 dies without giving the lease up: once it ran out, w2 continues from the cursor.
  std::this_thread::sleep_for(lease_ + milliseconds(100));
  ArchivePass taken = *second->passOnce(*redis_);
  EXPECT_TRUE(taken.leader);
  EXPECT_EQ(taken.read, 3u);
  EXPECT_EQ(ids(keys_.appArchive("shop")).size(), 6u);
  EXPECT_EQ(field(keys_.archiver(), "owner"), "w2");
  EXPECT_FALSE(first->passOnce(*redis_)->leader);
  // A graceful stop gives the lease up at once.
  second->release(*redis_);
  EXPECT_TRUE(first->passOnce(*redis_)->leader);
}

TEST_F(ArchiverTest, ABatchRepeatedAfterACrashAddsNoDuplicateAndLeavesNoGap) {
  const std::string a1 = add("a");
  const std::string a2 = add("a");
  const std::string a3 = add("a");
  // What a worker killed between its copies and its cursor left: two copies, no cursor.
  ASSERT_TRUE(
      redis_->command({"XADD", keys_.appArchive("shop"), a1, "event", "{\"kind\":\"a\"}"}).ok());
  ASSERT_TRUE(
      redis_->command({"XADD", keys_.appArchive("shop"), a2, "event", "{\"kind\":\"a\"}"}).ok());
  auto pass = make("w2")->passOnce(*redis_);
  ASSERT_TRUE(pass.ok()) << pass.error().message;
  EXPECT_EQ(pass->read, 3u);
  EXPECT_EQ(ids(keys_.appArchive("shop")), (std::vector<std::string>{a1, a2, a3}));
  EXPECT_EQ(field(keys_.archiver(), "cursor"), a3);
  EXPECT_EQ(pass->gaps, 0u);
}

TEST_F(ArchiverTest, RetentionTrimsEachArchiveOnTheInjectedClock) {
  const std::int64_t now = unixMillis(clock_.now());
  const std::int64_t day = 86'400'000;
  snapshot_ = apps(std::chrono::hours(24 * 30));
  const std::string old = add("a", std::to_string(now - 40 * day) + "-0");
  const std::string mid = add("a", std::to_string(now - 20 * day) + "-0");
  const std::string recent = add("a", std::to_string(now - day / 2) + "-0");
  // An archive of an app removed since: trimmed by the retention recorded for it.
  ASSERT_TRUE(redis_
                  ->command({"XADD", keys_.appArchive("gone"), std::to_string(now - 3 * day) + "-0",
                             "event", "{}"})
                  .ok());
  ASSERT_TRUE(redis_
                  ->command({"HSET", keys_.retention(), "archive:" + keys_.appArchive("gone"),
                             std::to_string(day)})
                  .ok());
  auto pass = make("w1")->passOnce(*redis_);
  ASSERT_TRUE(pass.ok()) << pass.error().message;
  EXPECT_EQ(ids(keys_.appArchive("shop")), (std::vector<std::string>{mid, recent}));
  EXPECT_EQ(ids(keys_.archive()), std::vector<std::string>{recent});  // 24h
  EXPECT_EQ(ids(keys_.appArchive("gone")), std::vector<std::string>{});
  EXPECT_EQ(field(keys_.retention(), "archive:" + keys_.appArchive("shop")),
            std::to_string(30 * day));
  // Ten days later `mid` is 30 days old: the next trim removes it.
  clock_.advance(std::chrono::hours(24 * 10) + std::chrono::minutes(1));
  auto trimmed = make("w1")->trimOnce(*redis_);
  ASSERT_TRUE(trimmed.ok());
  EXPECT_EQ(ids(keys_.appArchive("shop")), std::vector<std::string>{recent});
  (void)old;
}

TEST_F(ArchiverTest, AStreamTrimmedAheadOfTheArchiverIsAGapRecordedAndCounted) {
  for (int i = 0; i < 3; ++i) add("a");
  auto archiver = make("w1");
  ASSERT_TRUE(archiver->passOnce(*redis_).ok());
  const std::string cursor = field(keys_.archiver(), "cursor");
  std::vector<std::string> later;
  for (int i = 0; i < 5; ++i) later.push_back(add("a"));
  // Retention (or MAXLEN) removed three entries the archiver never read.
  ASSERT_TRUE(redis_->command({"XTRIM", "events", "MINID", "=", later[3]}).ok());
  auto pass = archiver->passOnce(*redis_);
  ASSERT_TRUE(pass.ok()) << pass.error().message;
  EXPECT_EQ(pass->gaps, 1u);
  EXPECT_EQ(field(keys_.archiver(), "gaps"), "1");
  EXPECT_EQ(field(keys_.archiver(), "lost"), "3");
  EXPECT_EQ(field(keys_.archiver(), "last_gap_from"), cursor);
  // The gap ends just before the first entry the trim kept: later[2] when the two share a
  // millisecond, the previous millisecond's largest id when later[3] began a new one.
  EXPECT_EQ(field(keys_.archiver(), "last_gap_to"), justBefore(later[3]));
  EXPECT_EQ(metrics_.value("relay_archive_gaps_total"), 1);
  EXPECT_NE(log_.str().find("entries lost to replay"), std::string::npos);
  auto archived = ids(keys_.appArchive("shop"));
  ASSERT_EQ(archived.size(), 5u);  // the first three, then the two that survived
  EXPECT_EQ(archived[3], later[3]);
  auto status = readArchivesStatus(*redis_, keys_, unixMillis(clock_.now()));
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->archiver.gaps, 1);
  EXPECT_EQ(status->archiver.lag_ms, 0);
}

TEST_F(ArchiverTest, WhatTheStreamLostBeforeTheFirstPassIsNoGap) {
  for (int i = 0; i < 4; ++i) add("a");
  const std::string kept = add("a");
  ASSERT_TRUE(redis_->command({"XTRIM", "events", "MINID", "=", kept}).ok());
  auto pass = make("w1")->passOnce(*redis_);
  ASSERT_TRUE(pass.ok());
  EXPECT_EQ(pass->gaps, 0u);
  EXPECT_EQ(ids(keys_.appArchive("shop")), std::vector<std::string>{kept});
}

TEST_F(ArchiverTest, StatusListsEveryArchiveWithItsSizeAndOldestEntry) {
  const std::string a1 = add("a");
  add("b");
  ASSERT_TRUE(make("w1")->passOnce(*redis_).ok());
  auto status = readArchivesStatus(*redis_, keys_, unixMillis(clock_.now()));
  ASSERT_TRUE(status.ok()) << status.error().message;
  ASSERT_EQ(status->archives.size(), 3u);  // the stream's, ops', shop's
  EXPECT_EQ(status->archives[0].key, keys_.archive());
  EXPECT_EQ(status->archives[0].entries, 2);
  EXPECT_EQ(status->archives[2].app, "shop");
  EXPECT_EQ(status->archives[2].oldest->toString(), a1);
  EXPECT_EQ(status->archiver.owner, "w1");
  EXPECT_EQ(status->archiver.archived, 4);
}

// docs/operations.md "Statistics: relay stats": the archives and the archiver, text and JSON.
TEST_F(ArchiverTest, RelayStatsShowsEachArchiveAndTheArchiversGaps) {
  const std::string a1 = add("a");
  add("b");
  auto archiver = make("w1");
  ASSERT_TRUE(archiver->passOnce(*redis_).ok());
  std::vector<std::string> later;
  for (int i = 0; i < 3; ++i) later.push_back(add("c"));
  ASSERT_TRUE(redis_->command({"XTRIM", "events", "MINID", "=", later[2]}).ok());
  ASSERT_TRUE(archiver->passOnce(*redis_).ok());
  cli::testing::ScopedEnv uri("REDIS_URI", server().uri());
  cli::testing::ScopedEnv stream("REDIS_STREAM", "events");
  const auto text = cli::testing::run({"stats"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("archive relay:events:archive:relay:shop (app shop): 1 entry, oldest " +
                          a1 + " ("),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("archive relay:events:archive:relay (the stream's): 3 entries"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("archiver: w1, at " + later[2] +
                          ", caught up, 5 copies written, 1 gap of 2 entries (last: after "),
            std::string::npos)
      << text.out;
  const auto json = cli::testing::run({"stats", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto parsed = nlohmann::json::parse(json.out)["archive"];
  EXPECT_EQ(parsed["archives"].size(), 3u);
  EXPECT_EQ(parsed["archiver"]["gaps"], 1);
  EXPECT_EQ(parsed["archiver"]["lost"], 2);
  // The gap ends just before the first entry the trim kept: later[1] when the two share a
  // millisecond, the previous millisecond's largest id when later[2] began a new one.
  EXPECT_EQ(parsed["archiver"]["last_gap"]["up_to"], justBefore(later[2]));
}

}  // namespace
}  // namespace relay::history
