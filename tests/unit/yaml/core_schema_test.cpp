// The YAML 1.2 core schema as templates and patterns both read it. The rows marked "was" are
// where Relay's two former copies of this typing disagreed with each other or with the schema.
#include "yaml/core_schema.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>

namespace relay::yaml {
namespace {

YAML::Node value(const std::string& yaml) { return YAML::Load("v: " + yaml)["v"]; }

struct Row {
  const char* yaml;
  Type type;
  std::optional<double> number;  // numberValue() when it succeeds
};

const Row kRows[] = {
    {"~", Type::kNull, std::nullopt},
    {"null", Type::kNull, std::nullopt},
    {"NULL", Type::kNull, std::nullopt},
    {"", Type::kNull, std::nullopt},
    {"TRUE", Type::kBool, std::nullopt},
    {"False", Type::kBool, std::nullopt},
    {"yes", Type::kString, std::nullopt},
    {"tRUE", Type::kString, std::nullopt},
    {"-12", Type::kInt, -12},
    {"+5", Type::kInt, 5},
    {"0x1F", Type::kInt, 31},
    {"0o17", Type::kInt, 15},
    {"0X1F", Type::kString, std::nullopt},
    {"0x", Type::kString, std::nullopt},
    {"-0x10", Type::kString, std::nullopt},
    {"0b101", Type::kString, std::nullopt},
    {"1_000", Type::kString, std::nullopt},
    {"1.5e3", Type::kFloat, 1500},
    {".5", Type::kFloat, 0.5},
    {"1.", Type::kFloat, 1},
    {"1e", Type::kString, std::nullopt},
    {"1.2.3", Type::kString, std::nullopt},
    {".inf", Type::kFloat, std::nullopt},
    {"-.Inf", Type::kFloat, std::nullopt},
    {".NaN", Type::kFloat, std::nullopt},
    // was a float in the former app/yaml_value.cpp: the schema's .nan takes no sign.
    {"-.nan", Type::kString, std::nullopt},
    {"+.nan", Type::kString, std::nullopt},
    {".Nan", Type::kString, std::nullopt},
    // was kTagged (an error) in the former app/yaml_value.cpp, a string in the pattern copy.
    {"!!str 4", Type::kString, std::nullopt},
    {"\"4\"", Type::kString, std::nullopt},
    {"'true'", Type::kString, std::nullopt},
    {"! 12", Type::kString, std::nullopt},
    {"!!int 4", Type::kTagged, std::nullopt},
    {"!custom x", Type::kTagged, std::nullopt},
    // was not a number in the former app/yaml_value.cpp (beyond int64), 2^64 in the pattern copy.
    {"0xFFFFFFFFFFFFFFFF", Type::kInt, 18446744073709551615.0},
    {"18446744073709551616", Type::kInt, 18446744073709551616.0},
    {"[1]", Type::kList, std::nullopt},
    {"{a: 1}", Type::kMap, std::nullopt},
};

TEST(CoreSchema, TypesAndNumbersFollowTheTable) {
  for (const Row& row : kRows) {
    SCOPED_TRACE(row.yaml);
    const YAML::Node node = value(row.yaml);
    EXPECT_EQ(typeOf(node), row.type);
    const Result<double> number = numberValue(node);
    EXPECT_EQ(number.ok(), row.number.has_value());
    if (number.ok() && row.number) {
      EXPECT_EQ(*number, *row.number);
    }
  }
}

TEST(CoreSchema, PlainTextIsTypedLikeAPlainNode) {
  for (const Row& row : kRows) {
    const YAML::Node node = value(row.yaml);
    if (node.IsScalar() && node.Tag() == "?") {
      EXPECT_EQ(plainType(node.Scalar()), row.type) << row.yaml;
    }
  }
}

TEST(CoreSchema, NumbersThatCannotBeADoubleSayWhy) {
  EXPECT_EQ(numberValue(value(".inf")).error().message,
            "number .inf is not finite; only finite numbers are supported");
  EXPECT_EQ(numberValue(value("1e400")).error().message,
            "number 1e400 is out of range of a double");
  EXPECT_EQ(numberValue(value("1e-400")).error().message,
            "number 1e-400 is out of range of a double");
  EXPECT_EQ(numberValue(value("0x1FFFFFFFFFFFFFFFFF")).error().message,
            "number 0x1FFFFFFFFFFFFFFFFF is out of range (at most 64 bits)");
  EXPECT_EQ(numberValue(value("\"4\"")).error().message, "the string \"4\" is not a number");
}

TEST(CoreSchema, IntegersAreExactWithin64Bits) {
  EXPECT_EQ(intValue(value("42")), 42);
  EXPECT_EQ(intValue(value("-9223372036854775808")), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(intValue(value("0o17")), 15);
  EXPECT_EQ(intValue(value("0xff")), 255);
  EXPECT_EQ(intValue(value("9223372036854775808")), std::nullopt);
  EXPECT_EQ(intValue(value("\"42\"")), std::nullopt);
  EXPECT_EQ(intValue(value("4.0")), std::nullopt);
}

TEST(CoreSchema, BooleansAreTheThreeSpellingsOfTrueAndFalse) {
  EXPECT_EQ(boolValue(value("False")), false);
  EXPECT_EQ(boolValue(value("TRUE")), true);
  EXPECT_EQ(boolValue(value("on")), std::nullopt);
  EXPECT_TRUE(isYaml11Boolean(value("on")));
  EXPECT_FALSE(isYaml11Boolean(value("\"on\"")));
}

TEST(CoreSchema, DescriptionsNameTypeAndValue) {
  EXPECT_EQ(describe(value("\"4\"")), "the string \"4\"");
  EXPECT_EQ(describe(value("4")), "the integer 4");
  EXPECT_EQ(describe(value("")), "no value (null)");
  EXPECT_EQ(describe(value("[]")), "a list");
  EXPECT_EQ(describe(value("!x y")), "a value tagged !x");
}

TEST(CoreSchema, PositionsAreOneBased) {
  const YAML::Node node = YAML::Load("a: 1\nb:  [x]\n")["b"];
  EXPECT_EQ(line(node), 2);
  EXPECT_EQ(column(node), 5);
  EXPECT_EQ(line(YAML::Node()), 1);
}

}  // namespace
}  // namespace relay::yaml
