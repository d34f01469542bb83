#include "app/yaml_value.h"

#include <gtest/gtest.h>

namespace relay::app {
namespace {

YAML::Node value(const std::string& yaml) { return YAML::Load("v: " + yaml)["v"]; }

TEST(YamlValue, PlainScalarsFollowTheCoreSchema) {
  EXPECT_EQ(yamlType(value("~")), YamlType::kNull);
  EXPECT_EQ(yamlType(value("null")), YamlType::kNull);
  EXPECT_EQ(yamlType(value("TRUE")), YamlType::kBool);
  EXPECT_EQ(yamlType(value("yes")), YamlType::kString);
  EXPECT_EQ(yamlType(value("-12")), YamlType::kInt);
  EXPECT_EQ(yamlType(value("0x1F")), YamlType::kInt);
  EXPECT_EQ(yamlType(value("1.5e3")), YamlType::kFloat);
  EXPECT_EQ(yamlType(value(".inf")), YamlType::kFloat);
  EXPECT_EQ(yamlType(value("1.2.3")), YamlType::kString);
  EXPECT_EQ(yamlType(value("[1]")), YamlType::kList);
  EXPECT_EQ(yamlType(value("{a: 1}")), YamlType::kMap);
}

TEST(YamlValue, QuotedScalarsAreAlwaysStrings) {
  EXPECT_EQ(yamlType(value("\"4\"")), YamlType::kString);
  EXPECT_EQ(yamlType(value("'true'")), YamlType::kString);
  EXPECT_EQ(yamlType(value("\"null\"")), YamlType::kString);
}

TEST(YamlValue, OtherTagsAreNotGuessed) {
  EXPECT_EQ(yamlType(value("!!str 4")), YamlType::kTagged);
}

TEST(YamlValue, IntegersParseInEveryBaseAndRejectOverflow) {
  EXPECT_EQ(yamlInt(value("42")), 42);
  EXPECT_EQ(yamlInt(value("-9223372036854775808")), INT64_MIN);
  EXPECT_EQ(yamlInt(value("0o17")), 15);
  EXPECT_EQ(yamlInt(value("0xff")), 255);
  EXPECT_EQ(yamlInt(value("9223372036854775808")), std::nullopt);
  EXPECT_EQ(yamlInt(value("\"42\"")), std::nullopt);
}

TEST(YamlValue, NumbersAreFiniteOnly) {
  EXPECT_EQ(yamlNumber(value("0.5")), 0.5);
  EXPECT_EQ(yamlNumber(value("+2")), 2.0);
  EXPECT_EQ(yamlNumber(value(".nan")), std::nullopt);
  EXPECT_EQ(yamlNumber(value("1e999")), std::nullopt);
}

TEST(YamlValue, BooleansComeInThreeSpellings) {
  EXPECT_EQ(yamlBool(value("False")), false);
  EXPECT_EQ(yamlBool(value("true")), true);
  EXPECT_EQ(yamlBool(value("on")), std::nullopt);
  EXPECT_TRUE(isYaml11Boolean(value("on")));
  EXPECT_FALSE(isYaml11Boolean(value("\"on\"")));
}

TEST(YamlValue, DescriptionsNameTypeAndValue) {
  EXPECT_EQ(describeYaml(value("\"4\"")), "the string \"4\"");
  EXPECT_EQ(describeYaml(value("4")), "the integer 4");
  EXPECT_EQ(describeYaml(value("")), "no value (null)");
  EXPECT_EQ(describeYaml(value("[]")), "a list");
}

TEST(YamlValue, PositionsAreOneBased) {
  const YAML::Node node = YAML::Load("a:\n  b: 1\n")["a"]["b"];
  EXPECT_EQ(yamlLine(node), 2);
  EXPECT_EQ(yamlColumn(node), 6);
}

}  // namespace
}  // namespace relay::app
