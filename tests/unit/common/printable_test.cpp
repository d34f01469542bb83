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

// A right-to-left override shows "[app/x] ok <U+202E>gnp.exe" reversed on a terminal; a line
// separator breaks the line in some viewers (docs/operations.md "Logs").
TEST(Printable, EscapesBidirectionalControlsAndLineSeparators) {
  EXPECT_EQ(printable("a\u202Eb"), "a\\xE2\\x80\\xAEb");
  EXPECT_EQ(printable("a\u2028b\u2029c"), "a\\xE2\\x80\\xA8b\\xE2\\x80\\xA9c");
  for (const char* text : {"\u061C", "\u200E", "\u200F", "\u202A", "\u202B", "\u202C", "\u202D",
                           "\u2066", "\u2067", "\u2068", "\u2069"}) {
    EXPECT_EQ(printable(text).rfind("\\x", 0), 0u) << printable(text);
  }
  // Their neighbours are ordinary text.
  EXPECT_EQ(printable("\u2027\u202F\u2065\u206A\u200D"), "\u2027\u202F\u2065\u206A\u200D");
}

TEST(Printable, KeepsMultibyteTextAndEmoji) { EXPECT_EQ(printable("日本語 😀"), "日本語 😀"); }

}  // namespace
}  // namespace relay
