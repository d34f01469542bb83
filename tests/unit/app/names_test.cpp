#include "app/names.h"

#include <gtest/gtest.h>

#include <string>

namespace relay::app {
namespace {

TEST(Names, AcceptsLowercaseDigitsDashAndUnderscore) {
  EXPECT_TRUE(isValidName("users"));
  EXPECT_TRUE(isValidName("0rders_v2-eu"));
  EXPECT_TRUE(isValidName(std::string(63, 'a')));
}

TEST(Names, RejectsUppercaseLeadingPunctuationAndOverlongNames) {
  EXPECT_FALSE(isValidName(""));
  EXPECT_FALSE(isValidName("Users"));
  EXPECT_FALSE(isValidName("-users"));
  EXPECT_FALSE(isValidName("_users"));
  EXPECT_FALSE(isValidName("us.ers"));
  EXPECT_FALSE(isValidName("us ers"));
  EXPECT_FALSE(isValidName(std::string(64, 'a')));
}

TEST(Names, EnvNamesAreCIdentifiers) {
  EXPECT_TRUE(isValidEnvName("LOG_LEVEL"));
  EXPECT_TRUE(isValidEnvName("_x1"));
  EXPECT_FALSE(isValidEnvName("1X"));
  EXPECT_FALSE(isValidEnvName("A-B"));
  EXPECT_FALSE(isValidEnvName(""));
}

}  // namespace
}  // namespace relay::app
