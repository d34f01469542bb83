// RELAY_LOG_FORMAT=json: one JSON object per line with level, time, message and the fields;
// every line parses back, whatever bytes a field or a handler's output holds.
#include "observability/logger.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <streambuf>
#include <string>
#include <vector>

#include "common/rfc3339.h"
#include "fakes/fake_clock.h"

namespace relay::observability {
namespace {

using nlohmann::json;

std::vector<json> parseLines(const std::string& text) {
  std::vector<json> records;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    EXPECT_FALSE(line.empty());
    records.push_back(json::parse(line));  // throws (fails the test) on a bad line
  }
  return records;
}

class JsonLog : public ::testing::Test {
 protected:
  relay::testing::FakeClock clock_;
  std::ostringstream out_;
  Logger logger_{out_, clock_, LogLevel::kDebug, LogFormat::kJson};
};

TEST_F(JsonLog, EveryLineIsOneObjectWithLevelTimeMessageAndFields) {
  logger_.info("invocation succeeded", {{"message_id", "1700000000000-0"},
                                        {"app", "users"},
                                        {"handler", "bin/on-insert.sh"},
                                        {"attempt", "2"},
                                        {"outcome", "succeeded"},
                                        {"duration", "0.125s"}});
  const auto records = parseLines(out_.str());
  ASSERT_EQ(records.size(), 1u);
  const json& record = records[0];
  EXPECT_EQ(record["level"], "info");
  EXPECT_EQ(record["message"], "invocation succeeded");
  EXPECT_EQ(record["time"], formatRfc3339Millis(clock_.now()));
  EXPECT_TRUE(parseRfc3339(record["time"].get<std::string>()));
  EXPECT_EQ(record["message_id"], "1700000000000-0");
  EXPECT_EQ(record["app"], "users");
  EXPECT_EQ(record["handler"], "bin/on-insert.sh");
  EXPECT_EQ(record["attempt"], "2");
  EXPECT_EQ(record["outcome"], "succeeded");
  EXPECT_EQ(record["duration"], "0.125s");
}

TEST_F(JsonLog, LevelsAreNamedAndFilteredByTheConfiguredLevel) {
  std::ostringstream out;
  Logger logger(out, clock_, LogLevel::kWarn, LogFormat::kJson);
  logger.debug("hidden");
  logger.info("hidden too");
  logger.warn("shown");
  logger.error("shown too");
  const auto records = parseLines(out.str());
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0]["level"], "warn");
  EXPECT_EQ(records[1]["level"], "error");
}

TEST_F(JsonLog, HandlerOutputIsAnOutputRecordAtEveryLevel) {
  std::ostringstream out;
  Logger logger(out, clock_, LogLevel::kError, LogFormat::kJson);
  logger.handlerOutput("[users/bin/h.sh] hello {\"not\": \"parsed\"}");
  const auto records = parseLines(out.str());
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["level"], "output");
  EXPECT_EQ(records[0]["message"], "[users/bin/h.sh] hello {\"not\": \"parsed\"}");
}

TEST_F(JsonLog, NonUtf8BytesAreReplacedNotAllowedToBreakTheLine) {
  logger_.handlerOutput(std::string("[a/h] bad \xff\xfe bytes"));
  logger_.warn(std::string("message \xc3\x28"), {{"reason", std::string("exit \x80 3")}});
  const auto records = parseLines(out_.str());
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0]["message"], "[a/h] bad \xEF\xBF\xBD\xEF\xBF\xBD bytes");
  EXPECT_EQ(records[1]["message"], "message \xEF\xBF\xBD(");
  EXPECT_EQ(records[1]["reason"], "exit \xEF\xBF\xBD 3");
}

TEST_F(JsonLog, NewlinesAndControlCharactersStayInsideOneLine) {
  logger_.handlerOutput("[a/h] tab\there");
  logger_.error("multi\nline", {{"error", "a\r\nb\x01"}});
  const std::string text = out_.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2);
  const auto records = parseLines(text);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0]["message"], "[a/h] tab\there");
  EXPECT_EQ(records[1]["message"], "multi\nline");
  EXPECT_EQ(records[1]["error"], "a\r\nb\x01");
}

TEST(TextLog, HandlerOutputIsVerbatimAndFieldsWithSpacesAreQuoted) {
  relay::testing::FakeClock clock;
  std::ostringstream out;
  Logger logger(out, clock, LogLevel::kError, LogFormat::kText);
  logger.handlerOutput("[a/h] exactly this");
  logger.error("invocation failed", {{"reason", "exit 3"}, {"app", "a"}});
  EXPECT_EQ(out.str(), "[a/h] exactly this\n" + formatRfc3339Millis(clock.now()) +
                           " error invocation failed reason=\"exit 3\" app=a\n");
}

TEST(TextLog, HandlerOutputCannotForgeAPrefixOrDriveTheTerminal) {
  relay::testing::FakeClock clock;
  std::ostringstream out;
  Logger logger(out, clock, LogLevel::kInfo, LogFormat::kText);
  logger.handlerOutput("[a/h] ok\r[other/app] forged \x1b[2K\x1b]0;title\x07 tab\tkept \xc3\xa9");
  EXPECT_EQ(out.str(),
            "[a/h] ok\\x0D[other/app] forged \\x1B[2K\\x1B]0;title\\x07 tab\tkept \xc3\xa9\n");
}

TEST(TextLog, ControlCharactersInMessagesAndFieldsAreEscapedToo) {
  relay::testing::FakeClock clock;
  std::ostringstream out;
  Logger logger(out, clock, LogLevel::kInfo, LogFormat::kText);
  logger.warn("bad\rmessage", {{"reason", "exit\x1b[31m"}});
  const std::string line = out.str();
  EXPECT_EQ(line.find('\r'), std::string::npos) << line;
  EXPECT_EQ(line.find('\x1b'), std::string::npos) << line;
  EXPECT_NE(line.find("bad\\x0Dmessage"), std::string::npos) << line;
}

// A stream buffer that keeps each write it is handed, as stderr (unbuffered) makes each one a
// write(2): a line written in two pieces could interleave with another process's output.
class WriteRecorder : public std::streambuf {
 public:
  std::vector<std::string> writes;

 protected:
  std::streamsize xsputn(const char* data, std::streamsize size) override {
    writes.emplace_back(data, static_cast<std::size_t>(size));
    return size;
  }
  int_type overflow(int_type c) override {
    if (c != traits_type::eof()) writes.emplace_back(1, traits_type::to_char_type(c));
    return c;
  }
};

TEST(TextLog, EachLineReachesTheStreamInOneWriteWithItsNewline) {
  relay::testing::FakeClock clock;
  WriteRecorder recorder;
  std::ostream out(&recorder);
  for (const LogFormat format : {LogFormat::kText, LogFormat::kJson}) {
    recorder.writes.clear();
    Logger logger(out, clock, LogLevel::kInfo, format);
    logger.info("invocation succeeded", {{"app", "a"}});
    logger.handlerOutput("[a/h] a line of output");
    ASSERT_EQ(recorder.writes.size(), 2u);
    for (const std::string& write : recorder.writes) {
      EXPECT_EQ(write.find('\n'), write.size() - 1) << write;
    }
  }
}

TEST(LogSettings, ParseKnownLevelsAndFormatsOnly) {
  EXPECT_EQ(parseLogLevel("warn"), LogLevel::kWarn);
  EXPECT_FALSE(parseLogLevel("WARN"));
  EXPECT_EQ(parseLogFormat("json"), LogFormat::kJson);
  EXPECT_FALSE(parseLogFormat("yaml"));
}

}  // namespace
}  // namespace relay::observability
