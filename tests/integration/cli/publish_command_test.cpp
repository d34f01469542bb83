// `relay publish`: the real binary against a real redis-server.
#include <gtest/gtest.h>

#include <fstream>

#include "fakes/temp_dir.h"
#include "integration/ops/relay_binary.h"
#include "stream/stream_entry.h"
#include "support/redis_digest.h"
#include "support/redis_server.h"

namespace relay::testing {
namespace {

constexpr const char* kTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

class Publish : public RedisTest {
 protected:
  void SetUp() override {
    RedisTest::SetUp();
    redis_ = server().connect();
  }
  BinaryRun relay(const std::vector<std::string>& args, const std::string& stdin_text = "",
                  std::vector<std::string> env = {}) {
    env.push_back("REDIS_URI=" + server().uri());
    return runRelay(args, env, std::chrono::seconds(60), stdin_text);
  }
  std::vector<stream::StreamEntry> entries(const std::string& stream = "events") {
    auto reply = redis_->command({"XRANGE", stream, "-", "+"});
    auto parsed = stream::parseEntries(reply->view());
    return parsed.ok() ? *parsed : std::vector<stream::StreamEntry>{};
  }
  std::string digest() { return datasetDigest(*redis_); }

  std::unique_ptr<redis::Connection> redis_;
  TempDir files_;
};

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    out.push_back(text.substr(start, end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

TEST_F(Publish, AppendsOneEventVerbatimAndPrintsItsId) {
  const std::string event = R"({"event_name":"INSERT", "table_name":"users","n":1.50})";
  const BinaryRun run = relay({"publish", "--event", event});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto stored = entries();
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(run.out, stored[0].id + "\n");
  ASSERT_EQ(stored[0].fields.size(), 1u);
  EXPECT_EQ(stored[0].fields[0].first, "event");
  EXPECT_EQ(stored[0].fields[0].second, event);  // byte for byte: spacing and 1.50 kept
}

TEST_F(Publish, ReadsStdinAndAtFileWithoutTheTrailingNewline) {
  files_.write("event.json", "{\"from\":\"file\"}\n");
  const BinaryRun from_file =
      relay({"publish", "--event", "@" + (files_.path() / "event.json").string()});
  ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
  const BinaryRun from_stdin = relay({"publish"}, "{\"from\":\"stdin\"}\r\n");
  ASSERT_EQ(from_stdin.exit_code, 0) << from_stdin.err;
  const auto stored = entries();
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_EQ(*stored[0].find("event"), R"({"from":"file"})");
  EXPECT_EQ(*stored[1].find("event"), R"({"from":"stdin"})");
}

TEST_F(Publish, StoresTraceparentAndTracestateNextToTheEvent) {
  const BinaryRun run = relay({"publish", "--event", "{}", "--traceparent", kTraceparent,
                               "--tracestate", "vendor=abc,other@sys=1"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto stored = entries();
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(*stored[0].find("traceparent"), kTraceparent);
  EXPECT_EQ(*stored[0].find("tracestate"), "vendor=abc,other@sys=1");
}

TEST_F(Publish, UsesRedisStream) {
  const BinaryRun run = relay({"publish", "--event", "{}"}, "", {"REDIS_STREAM=orders"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(entries("orders").size(), 1u);
  EXPECT_EQ(entries("events").size(), 0u);
}

TEST_F(Publish, LinesAppendsOneEntryPerNonBlankLineInOrder) {
  const BinaryRun run = relay({"publish", "--lines"}, "{\"n\":1}\n\n{\"n\":2}\r\n  \n{\"n\":3}");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto stored = entries();
  ASSERT_EQ(stored.size(), 3u);
  const std::vector<std::string> printed = lines(run.out);
  ASSERT_EQ(printed.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(printed[i], stored[i].id);
    EXPECT_EQ(*stored[i].find("event"), "{\"n\":" + std::to_string(i + 1) + "}");
  }
}

TEST_F(Publish, InvalidLineIsRefusedWithItsLineAndOffsetAndNothingIsAppended) {
  (void)redis_->command({"XADD", "events", "*", "event", "{\"before\":true}"});
  const std::string before = digest();
  // Line 3 holds invalid UTF-8 at byte 6 of the line (byte 22 of the input).
  const BinaryRun run =
      relay({"publish", "--lines"}, "{\"n\":1}\n{\"n\":2}\n{\"a\":\"\xff\"}\n{\"n\":4}\n");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("line 3, byte 6 (byte 22 of the input): invalid JSON: invalid UTF-8"),
            std::string::npos)
      << run.err;
  EXPECT_NE(run.err.find("nothing was appended"), std::string::npos) << run.err;
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(digest(), before);
}

TEST_F(Publish, EveryConsumerSideCheckRefusesWithExitTwo) {
  const std::string before = digest();
  std::string deep;
  for (int i = 0; i < 65; ++i) deep += "{\"a\":";
  deep += "1";
  for (int i = 0; i < 65; ++i) deep += "}";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[1,2]", "byte 0: the event must be a JSON object, got an array"},
      {"  \"text\"", "byte 2: the event must be a JSON object, got a string"},
      {"{\"a\":1", "byte 6: invalid JSON: unexpected end of input"},
      {"{\"a\":\"\xc3\x28\"}", "byte 6: invalid JSON: invalid UTF-8"},
      {deep, "invalid JSON: nested deeper than 64 levels"},
      {"", "byte 0: the event is empty"},
  };
  for (const auto& [event, expected] : cases) {
    const BinaryRun run = relay({"publish"}, event);
    EXPECT_EQ(run.exit_code, 2) << event;
    EXPECT_NE(run.err.find(expected), std::string::npos) << event << " -> " << run.err;
  }
  EXPECT_EQ(digest(), before);
  EXPECT_EQ(*redis_->command({"EXISTS", "events"})->integer(), 0);
}

TEST_F(Publish, OversizedEventIsRefusedAgainstMaxEventBytes) {
  const std::string before = digest();
  const std::string event = "{\"pad\":\"" + std::string(100, 'x') + "\"}";
  const BinaryRun refused = relay({"publish", "--event", event}, "", {"MAX_EVENT_BYTES=64"});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("byte 64: event is 110 bytes, over MAX_EVENT_BYTES 64B"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(digest(), before);
  const BinaryRun accepted = relay({"publish", "--event", event}, "", {"MAX_EVENT_BYTES=110"});
  EXPECT_EQ(accepted.exit_code, 0) << accepted.err;
}

TEST_F(Publish, MalformedTraceparentOrTracestateIsRefused) {
  const std::string before = digest();
  for (const std::string bad :
       {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7", "not-a-traceparent",
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}) {
    const BinaryRun run = relay({"publish", "--event", "{}", "--traceparent", bad});
    EXPECT_EQ(run.exit_code, 2) << bad;
    EXPECT_NE(run.err.find("invalid traceparent"), std::string::npos) << run.err;
  }
  const BinaryRun state =
      relay({"publish", "--event", "{}", "--traceparent", kTraceparent, "--tracestate", "Key=1"});
  EXPECT_EQ(state.exit_code, 2);
  EXPECT_NE(state.err.find("tracestate key \"Key\""), std::string::npos) << state.err;
  const BinaryRun alone = relay({"publish", "--event", "{}", "--tracestate", "k=1"});
  EXPECT_EQ(alone.exit_code, 2);
  EXPECT_EQ(digest(), before);
}

TEST_F(Publish, UnreachableRedisFailsWithExitOne) {
  const BinaryRun run =
      runRelay({"publish", "--event", "{}"}, {"REDIS_URI=127.0.0.1:1"}, std::chrono::seconds(60));
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("cannot reach Redis"), std::string::npos) << run.err;
}

TEST_F(Publish, WrongKeyTypeAppendsNothingAndFails) {
  (void)redis_->command({"SET", "events", "not a stream"});
  const std::string before = digest();
  const BinaryRun run = relay({"publish", "--lines"}, "{\"n\":1}\n{\"n\":2}\n");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("WRONGTYPE"), std::string::npos) << run.err;
  EXPECT_EQ(digest(), before);
}

}  // namespace
}  // namespace relay::testing
