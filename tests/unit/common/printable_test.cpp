#include "common/printable.h"

#include <gtest/gtest.h>

namespace relay {
namespace {

TEST(Printable, EscapesControlBytesAndInvalidUtf8) {
  EXPECT_EQ(printable("plain ü text"), "plain ü text");
  EXPECT_EQ(printable("a\x1b[31mred"), "a\\x1B[31mred");
  EXPECT_EQ(printable("bad \xff\xfe!"), "bad \\xFF\\xFE!");
  EXPECT_EQ(printable("cut \xc3"), "cut \\xC3");
  EXPECT_EQ(printable("overlong \xc0\xaf"), "overlong \\xC0\\xAF");
  EXPECT_EQ(printable("line\nbreak"), "line\\x0Abreak");
  EXPECT_EQ(printable("line\nbreak", KeepControls::kTabAndNewline), "line\nbreak");
}

TEST(Printable, CarriageReturnCannotRewriteTheLineStart) {
  EXPECT_EQ(printable("[a/h] ok\r[other/app] forged"), "[a/h] ok\\x0D[other/app] forged");
}

TEST(Printable, KeepsTabWhenAskedButNotNewline) {
  EXPECT_EQ(printable("a\tb\nc", KeepControls::kTab), "a\tb\\x0Ac");
  EXPECT_EQ(printable("a\tb"), "a\\x09b");
}

TEST(Printable, EscapesDelAndC1ControlsEvenAsValidUtf8) {
  EXPECT_EQ(printable("del\x7f"), "del\\x7F");
  // U+009B is CSI, which some terminals obey like ESC [.
  EXPECT_EQ(printable("csi\xc2\x9b"
                      "31m"),
            "csi\\xC2\\x9B31m");
  // U+00A0 (no-break space) is not a control: kept.
  EXPECT_EQ(printable("nb\xc2\xa0sp"), "nb\xc2\xa0sp");
}

TEST(Printable, KeepsMultibyteTextAndEmoji) { EXPECT_EQ(printable("日本語 😀"), "日本語 😀"); }

}  // namespace
}  // namespace relay
