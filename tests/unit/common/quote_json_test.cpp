#include "common/quote_json.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>
#include <string>

namespace relay {
namespace {

using namespace std::string_literals;

TEST(QuoteJson, EscapesQuotesBackslashesAndEveryControlCharacter) {
  EXPECT_EQ(quoteJson(""), "\"\"");
  EXPECT_EQ(quoteJson("say \"hi\" \\ bye"), R"("say \"hi\" \\ bye")");
  EXPECT_EQ(quoteJson("a\tb\nc"), R"("a\tb\nc")");
  EXPECT_EQ(quoteJson("nul\0 cr\r esc\x1b del\x7f"s),
            R"("nul\u0000 cr\u000d esc\u001b del\u007f")");
}

TEST(QuoteJson, KeepsUtf8AndOtherBytesAsTheyAre) {
  EXPECT_EQ(quoteJson("caf\xc3\xa9 \xe2\x82\xac"), "\"caf\xc3\xa9 \xe2\x82\xac\"");
}

// The point of one quoter: what it writes reads back as the same text in JSON and in YAML.
TEST(QuoteJson, ReadsBackAsTheSameTextInJsonAndYaml) {
  std::string every_ascii;
  for (int byte = 0; byte < 0x80; ++byte) every_ascii += static_cast<char>(byte);
  for (const std::string& text : {every_ascii, "plain"s, "caf\xc3\xa9"s, "- not: [a list]"s}) {
    const std::string quoted = quoteJson(text);
    EXPECT_EQ(nlohmann::json::parse(quoted).get<std::string>(), text) << quoted;
    EXPECT_EQ(YAML::Load(quoted).Scalar(), text) << quoted;
  }
}

}  // namespace
}  // namespace relay
