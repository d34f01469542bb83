#include "common/enum_names.h"

#include <gtest/gtest.h>

namespace relay {
namespace {

enum class Color { kRed, kGreen, kBlue };

constexpr EnumNames<Color, 2> kColors = {{{{Color::kRed, "red"}, {Color::kGreen, "green"}}}};

TEST(EnumNames, NamesAndParsesThroughOneTable) {
  EXPECT_EQ(kColors.name(Color::kGreen), "green");
  EXPECT_EQ(kColors.parse("red"), Color::kRed);
  static_assert(kColors.parse("green") == Color::kGreen);
}

TEST(EnumNames, WhatTheTableLacksHasNoName) {
  EXPECT_EQ(kColors.name(Color::kBlue), "");
  EXPECT_EQ(kColors.parse("Red"), std::nullopt);
  EXPECT_EQ(kColors.parse(""), std::nullopt);
}

}  // namespace
}  // namespace relay
