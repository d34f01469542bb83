#include <gtest/gtest.h>
#include <simdjson.h>

#include <cmath>
#include <limits>
#include <string>

#include "event/event.h"

namespace relay::event {
namespace {

Event decoded(const std::string& json) {
  Result<Event> event = decode(json);
  if (!event.ok()) {
    ADD_FAILURE() << json << ": " << event.error().message;
    return decode("{}").value();
  }
  return std::move(event).value();
}

std::string errorOf(const std::string& json) {
  Result<Event> event = decode(json);
  if (event.ok()) {
    ADD_FAILURE() << "decoded, expected an error: " << json;
    return "";
  }
  EXPECT_EQ(event.error().kind, ErrorKind::kInvalidArgument);
  return event.error().message;
}

std::string nested(int depth) {
  std::string json;
  for (int i = 0; i < depth; ++i) json += i == 0 ? "{\"a\":" : (i % 2 ? "[" : "{\"a\":");
  json += "1";
  for (int i = depth - 1; i >= 0; --i) json += i == 0 ? "}" : (i % 2 ? "]" : "}");
  return json;
}

TEST(Decoder, KeepsTheRawBytesVerbatim) {
  const std::string raw = " {\"b\" : [1, 2.50],\n \"a\":\"\\u00e9\"}  ";
  const Event event = decoded(raw);
  EXPECT_EQ(event.raw(), raw);
}

TEST(Decoder, ExposesEveryJsonType) {
  const Event event =
      decoded(R"({"s":"x","n":-12.5e1,"t":true,"f":false,"z":null,"a":[1,"2"],"o":{"k":1}})");
  const Value root = event.root();
  ASSERT_TRUE(root.isObject());
  EXPECT_EQ(root.size(), 7u);
  EXPECT_EQ(root.find("s")->string(), "x");
  EXPECT_EQ(root.find("n")->number(), -125.0);
  EXPECT_TRUE(root.find("t")->boolean());
  EXPECT_TRUE(root.find("f")->isBool());
  EXPECT_FALSE(root.find("f")->boolean());
  EXPECT_TRUE(root.find("z")->isNull());
  EXPECT_EQ(root.find("a")->size(), 2u);
  EXPECT_EQ(root.find("o")->find("k")->number(), 1.0);
  EXPECT_FALSE(root.find("missing").has_value());
  EXPECT_FALSE(root.find("s")->find("x").has_value());
}

TEST(Decoder, IteratesMembersAndElementsInOrder) {
  const Event event = decoded(R"({"x":[1,[2,3],{"y":4},5],"z":{}})");
  std::string keys;
  for (auto it = event.root().members().begin(); !(it == event.root().members().end()); ++it) {
    keys += std::string(it.key()) + ";";
  }
  EXPECT_EQ(keys, "x;z;");
  std::vector<Type> types;
  for (const Value element : event.root().find("x")->elements()) types.push_back(element.type());
  EXPECT_EQ(types, (std::vector<Type>{Type::kNumber, Type::kArray, Type::kObject, Type::kNumber}));
  EXPECT_EQ(event.root().find("z")->size(), 0u);
}

// One reading of JSON (docs/patterns.md "Events"): a repeated key would let the matcher and a
// handler's JSON library read different values, so it makes the event malformed.
TEST(Decoder, RejectsARepeatedKey) {
  EXPECT_EQ(errorOf(R"({"a":1,"a":2})"), R"(duplicate key "a" at byte 7)");
  EXPECT_EQ(errorOf(R"({"role":"user","amount":1,"role":"admin","amount":1000000000})"),
            R"(duplicate key "role" at byte 26)");
}

TEST(Decoder, RejectsAKeyRepeatedAfterUnescaping) {
  EXPECT_EQ(errorOf(R"({"role":"user","r\u006fle":"admin"})"),
            R"(duplicate key "role" at byte 15)");
  EXPECT_EQ(errorOf(R"({"\u0061":1,"a":2})"), R"(duplicate key "a" at byte 12)");
  EXPECT_EQ(errorOf(R"({"\u00e9":1,"\u00E9":2})"), "duplicate key \"\xC3\xA9\" at byte 12");
}

TEST(Decoder, RejectsARepeatedKeyAtAnyDepthAndInLargeObjects) {
  EXPECT_EQ(errorOf(R"({"x":{"b":1,"c":[{"d":1,"d":2}]}})"), R"(duplicate key "d" at byte 24)");
  std::string large = "{";
  for (int i = 0; i < 200; ++i)
    large += "\"k" + std::to_string(i) + "\":" + std::to_string(i) + ",";
  EXPECT_TRUE(decode(large + "\"k200\":0}").ok());
  EXPECT_EQ(errorOf(large + "\"k137\":0}"),
            "duplicate key \"k137\" at byte " + std::to_string(large.size()));
}

TEST(Decoder, TheSameKeyInDifferentObjectsIsNoRepeat) {
  const Event event = decoded(R"({"a":{"a":1},"b":[{"a":1},{"a":2}],"ab":0,"":1,"ba":2})");
  EXPECT_EQ(event.root().find("a")->find("a")->number(), 1.0);
  EXPECT_TRUE(decode(R"({"a":1,"A":2,"a ":3,"\u0000":4,"\u0000\u0000":5})").ok());
}

TEST(Decoder, ARepeatedKeyIsQuotedShortInTheMessage) {
  const std::string key(300, 'k');
  const std::string message = errorOf("{\"" + key + "\":1,\"" + key + "\":2}");
  EXPECT_EQ(message.rfind("duplicate key \"" + std::string(64, 'k') + "...\" at byte ", 0), 0u)
      << message;
}

TEST(Decoder, UnescapesStringsAndKeys) {
  const Event event = decoded(R"({"k\"ey":"a\\b\/c\n\t\u00e9\ud83d\ude00"})");
  EXPECT_EQ(event.root().find("k\"ey")->string(), "a\\b/c\n\t\xC3\xA9\xF0\x9F\x98\x80");
}

TEST(Decoder, AcceptsMultibyteUtf8) {
  EXPECT_EQ(decoded("{\"n\":\"Sant Julià de Lòria 日本 🚀\"}").root().find("n")->string(),
            "Sant Julià de Lòria 日本 🚀");
}

TEST(Decoder, AcceptsDepth64) {
  const Event event = decoded(nested(64));
  EXPECT_TRUE(event.root().isObject());
}

TEST(Decoder, RejectsDepth65) {
  EXPECT_EQ(errorOf(nested(65)), "invalid JSON at byte 192: nested deeper than 64 levels");
}

TEST(Decoder, RejectsDeepArraysAsWell) {
  EXPECT_NE(errorOf("{\"a\":" + std::string(64, '[') + std::string(64, ']') + "}")
                .find("nested deeper than 64 levels"),
            std::string::npos);
}

TEST(Decoder, RejectsNonObjectTopLevel) {
  EXPECT_EQ(errorOf("[1,2]"), "the event must be a JSON object, got an array");
  EXPECT_EQ(errorOf("\"x\""), "the event must be a JSON object, got a string");
  EXPECT_EQ(errorOf("12"), "the event must be a JSON object, got a number");
  EXPECT_EQ(errorOf("true"), "the event must be a JSON object, got a boolean");
  EXPECT_EQ(errorOf("null"), "the event must be a JSON object, got null");
}

TEST(Decoder, RejectsEmptyInput) {
  EXPECT_EQ(errorOf(""), "the event is empty; expected a JSON object");
  EXPECT_EQ(errorOf(" \n\t"), "the event is empty; expected a JSON object");
}

TEST(Decoder, LocatedErrorsPointAtTheOffendingByte) {
  const auto located = [](std::string text) {
    auto event = decodeLocated(std::move(text));
    EXPECT_FALSE(event.ok());
    return event.ok() ? DecodeError{} : event.error();
  };
  const DecodeError utf8 = located("{\"a\":\"\xff\"}");
  EXPECT_EQ(utf8.offset, 6u);
  EXPECT_EQ(utf8.message, "invalid UTF-8");
  EXPECT_TRUE(utf8.json_syntax);
  EXPECT_EQ(utf8.toString(), "invalid JSON at byte 6: invalid UTF-8");
  const DecodeError array = located("  [1]");
  EXPECT_EQ(array.offset, 2u);
  EXPECT_FALSE(array.json_syntax);
  EXPECT_EQ(array.toString(), "the event must be a JSON object, got an array");
  const DecodeError empty = located(" \n");
  EXPECT_EQ(empty.offset, 2u);
  EXPECT_EQ(empty.toString(), "the event is empty; expected a JSON object");
}

TEST(Decoder, RejectsInvalidUtf8) {
  EXPECT_EQ(errorOf("{\"a\":\"\xff\"}"), "invalid JSON at byte 6: invalid UTF-8");
  EXPECT_NE(errorOf("{\"a\":\"\x80\"}").find("invalid UTF-8"),
            std::string::npos);  // lone continuation
  EXPECT_NE(errorOf("{\"a\":\"\xC0\xAF\"}").find("invalid UTF-8"), std::string::npos);  // overlong
  EXPECT_NE(errorOf("{\"a\":\"\xED\xA0\x80\"}").find("invalid UTF-8"),
            std::string::npos);  // surrogate
  EXPECT_NE(errorOf("{\"a\":\"\xF4\x90\x80\x80\"}").find("invalid UTF-8"),
            std::string::npos);  // > U+10FFFF
  EXPECT_NE(errorOf("{\"a\":\"\xE2\x82\"}").find("invalid UTF-8"), std::string::npos);  // truncated
  EXPECT_NE(errorOf("{\"\xff\":1}").find("invalid UTF-8"), std::string::npos);          // in a key
  EXPECT_NE(errorOf("{\"a\":\"x\\u00e9\xff\"}").find("invalid UTF-8"),
            std::string::npos);  // after an escape
}

TEST(Decoder, RejectsBadEscapes) {
  EXPECT_EQ(errorOf(R"({"a":"\x"})"), "invalid JSON at byte 6: invalid escape sequence");
  EXPECT_NE(errorOf(R"({"a":"\u12"})").find("4 hex digits"), std::string::npos);
  EXPECT_NE(errorOf(R"({"a":"\ud800"})").find("unpaired UTF-16 surrogate"), std::string::npos);
  EXPECT_NE(errorOf(R"({"a":"\udc00"})").find("unpaired UTF-16 surrogate"), std::string::npos);
  EXPECT_NE(errorOf(R"({"a":"\ud800\u0041"})").find("unpaired UTF-16 surrogate"),
            std::string::npos);
}

TEST(Decoder, RejectsControlCharactersInStrings) {
  EXPECT_EQ(errorOf("{\"a\":\"x\ny\"}"),
            "invalid JSON at byte 7: control character in a string; it must be escaped");
  EXPECT_NE(errorOf(std::string("{\"a\":\"x\0y\"}", 11)).find("control character"),
            std::string::npos);
}

TEST(Decoder, RejectsMalformedStructure) {
  EXPECT_EQ(errorOf("{\"a\":1,}"), "invalid JSON at byte 7: expected a string key");
  EXPECT_EQ(errorOf("{\"a\" 1}"), "invalid JSON at byte 5: expected ':' after an object key");
  EXPECT_EQ(errorOf("{\"a\":1"),
            "invalid JSON at byte 6: unexpected end of input; expected ',' or a closing bracket");
  EXPECT_EQ(errorOf("{\"a\":[1 2]}"), "invalid JSON at byte 8: expected ',' or ']' in an array");
  EXPECT_EQ(errorOf("{\"a\":1} x"),
            "invalid JSON at byte 8: unexpected data after the top-level value");
  EXPECT_EQ(errorOf("{\"a\":\"x}"), "invalid JSON at byte 8: unterminated string");
  EXPECT_EQ(errorOf("{\"a\":tru}"), "invalid JSON at byte 5: invalid literal");
  EXPECT_EQ(errorOf("{a:1}"), "invalid JSON at byte 1: expected a string key");
  EXPECT_EQ(errorOf("{\"a\":}"), "invalid JSON at byte 5: unexpected character; expected a value");
  EXPECT_EQ(errorOf("{\"a\":1}}"),
            "invalid JSON at byte 7: unexpected data after the top-level value");
  EXPECT_EQ(errorOf(std::string("{\"a\":1}\0", 8)),
            "invalid JSON at byte 7: unexpected data after the top-level value");
}

TEST(Decoder, RejectsMalformedNumbers) {
  for (const char* number : {"01", "-", "1.", ".5", "1e", "1e+", "+1", "0x10", "NaN", "Infinity",
                             "-Infinity", "1.e3", "--1"}) {
    EXPECT_FALSE(decode(std::string("{\"n\":") + number + "}").ok()) << number;
  }
}

TEST(Decoder, ParsesNumbersExactly) {
  const Event event = decoded(
      R"({"a":0,"b":-0,"c":1.5e-3,"d":12345678901234567890,"e":9007199254740993,)"
      R"("f":0.1,"g":1E2,"h":2.2250738585072014e-308,"i":123456789012345678901234567890.5})");
  const Value root = event.root();
  EXPECT_EQ(root.find("a")->number(), 0.0);
  EXPECT_FALSE(std::signbit(root.find("b")->number()));
  EXPECT_EQ(root.find("c")->number(), 1.5e-3);
  EXPECT_EQ(root.find("d")->number(), 12345678901234567890.0);
  EXPECT_EQ(root.find("e")->number(), 9007199254740992.0);
  EXPECT_EQ(root.find("f")->number(), 0.1);
  EXPECT_EQ(root.find("g")->number(), 100.0);
  EXPECT_EQ(root.find("h")->number(), 2.2250738585072014e-308);
  EXPECT_EQ(root.find("i")->number(), 123456789012345678901234567890.5);
}

TEST(Decoder, HugeNumbersDecodeAsDoubles) {
  const std::string huge(400, '9');
  const Event event =
      decoded("{\"a\":" + huge + ",\"b\":-1e400,\"c\":1e-400,\"d\":" + huge + ".5e-300}");
  const Value root = event.root();
  EXPECT_EQ(root.find("a")->number(), std::numeric_limits<double>::infinity());
  EXPECT_EQ(root.find("b")->number(), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(root.find("c")->number(), 0.0);
  EXPECT_NEAR(root.find("d")->number(), 1e100, 1e86);
}

TEST(Decoder, AcceptsWhitespaceEverywhere) {
  const Event event = decoded(" \t\r\n{ \"a\" :\n[ 1 , { \"b\" : null } ] , \"c\":\"\" } \n");
  EXPECT_TRUE(event.root().find("a")->elements().begin() !=
              event.root().find("a")->elements().end());
  EXPECT_EQ(event.root().find("c")->string(), "");
}

TEST(Decoder, LargeDocumentsGrowTheTape) {
  std::string json = "{\"a\":[";
  for (int i = 0; i < 10'000; ++i) json += (i ? ",[]" : "[]");
  json += "]}";
  EXPECT_EQ(decoded(json).root().find("a")->size(), 10'000u);
}

TEST(Decoder, CopiesAreIndependent) {
  Event copy;
  {
    const Event original = decoded(R"({"a":"\u00e9","b":[1,2]})");
    copy = original;
  }
  EXPECT_EQ(copy.raw(), R"({"a":"\u00e9","b":[1,2]})");
  EXPECT_EQ(copy.root().find("a")->string(), "\xC3\xA9");
  EXPECT_EQ(copy.root().find("b")->size(), 2u);
}

TEST(Decoder, TakeRawReturnsTheBytes) {
  Event event = decoded(R"({"a":1})");
  EXPECT_EQ(std::move(event).takeRaw(), R"({"a":1})");
}

// simdjson (DOM) is an independent validator: both must accept or reject the same documents,
// except for numbers beyond its range, which Relay accepts by design, and repeated keys, which
// Relay rejects by design (RejectsARepeatedKey).
TEST(Decoder, AgreesWithSimdjsonOnValidity) {
  const std::vector<std::string> documents = {R"({})",
                                              R"({"a":1})",
                                              R"({"a":[1,2,{"b":null}]})",
                                              R"({"a":"\u00e9"})",
                                              R"({"a":"\ud800"})",
                                              R"({"a":01})",
                                              R"({"a":1.})",
                                              R"({"a":-})",
                                              R"({"a":tru})",
                                              R"({"a":1,})",
                                              R"([1])",
                                              R"({"a":1}x)",
                                              "{\"a\":\"\xC3\xA9\"}",
                                              "{\"a\":\"\xC3\"}",
                                              "{\"a\":\"\xED\xA0\x80\"}",
                                              R"({"a":"\q"})",
                                              R"({"a":1e5})",
                                              R"({"a":-0.0e-0})",
                                              "{\"a\" : \n 1}",
                                              R"({"a":"x)",
                                              R"({"a":[}])",
                                              R"({"a":{"b":[1,{"c":"d"}]}})",
                                              R"({"a":"\/\b\f\n\r\t"})",
                                              R"({"":""})",
                                              R"({"a":true,"b":false,"c":null})",
                                              R"({"a":nul})",
                                              R"({"a":1 "b":2})"};
  simdjson::dom::parser parser;
  for (const std::string& document : documents) {
    const bool ours = decode(document).ok();
    simdjson::dom::element element;
    const auto error = parser.parse(document).get(element);
    const bool theirs = !error && element.is_object();
    EXPECT_EQ(ours, theirs) << document;
  }
}

}  // namespace
}  // namespace relay::event
