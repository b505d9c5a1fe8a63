// Unit under test: results/model/text.h echo_input (user input made safe to
// repeat in a message: control and non-UTF-8 bytes as \xNN, cut at
// kMaxEchoBytes) and label_problem (the one rule for labels: 1..128 bytes
// of printable UTF-8), issue 15 "Labels" and "Messages".
#include <gtest/gtest.h>

#include <string>

#include "results/model/text.h"

namespace nightjar {
namespace {

TEST(EchoInput, PlainTextIsUnchanged) {
  EXPECT_EQ(echo_input("vanilla"), "vanilla");
  EXPECT_EQ(echo_input(""), "");
  EXPECT_EQ(echo_input("größe ✓"), "größe ✓");  // valid UTF-8 is kept
}

TEST(EchoInput, ControlAndInvalidBytesAreEscaped) {
  EXPECT_EQ(echo_input("a\nb"), "a\\x0ab");
  EXPECT_EQ(echo_input(std::string("\x1b[31mred\x7f", 9)), "\\x1b[31mred\\x7f");
  EXPECT_EQ(echo_input(std::string("nul\0x", 5)), "nul\\x00x");
  EXPECT_EQ(echo_input("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(echo_input("\xc3"), "\\xc3");                    // truncated sequence
  EXPECT_EQ(echo_input("\xc0\xaf"), "\\xc0\\xaf");           // overlong '/'
  EXPECT_EQ(echo_input("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
}

TEST(EchoInput, LongInputIsCutAndItsLengthNamed) {
  const std::string big(1'000'000, 'x');
  const std::string e = echo_input(big);
  EXPECT_EQ(e, std::string(kMaxEchoBytes, 'x') + "... (1000000 bytes)");
  EXPECT_EQ(echo_input("abcdef", 3), "abc... (6 bytes)");
  // Never inside a character: "é" is 2 bytes.
  EXPECT_EQ(echo_input("aé", 2), "a... (3 bytes)");
  EXPECT_EQ(echo_input("abc", 3), "abc");
}

TEST(LabelProblem, TheOneRule) {
  EXPECT_EQ(label_problem("vanilla"), "");
  EXPECT_EQ(label_problem("thp=never, v6.1 (rt) ✓"), "");
  EXPECT_EQ(label_problem(std::string(kMaxLabelBytes, 'a')), "");
  EXPECT_EQ(label_problem(""), "is empty");
  EXPECT_EQ(label_problem(std::string(kMaxLabelBytes + 1, 'a')),
            "is 129 bytes long (the limit is 128)");
  EXPECT_EQ(label_problem("a\nb"), "holds a control character (byte 2)");
  EXPECT_EQ(label_problem("tab\there"), "holds a control character (byte 4)");
  EXPECT_EQ(label_problem("del\x7f"), "holds a control character (byte 4)");
  EXPECT_EQ(label_problem("ok\xff"), "is not valid UTF-8 (byte 3)");
}

}  // namespace
TEST(TextInput, CutMiddleKeepsBothEndsAndWholeCharacters) {
  EXPECT_EQ(cut_middle("short", 10), "short");
  EXPECT_EQ(cut_middle("pft [a] clients=1 mode=threads size=512M", 20), "pft [a] c...ize=512M");
  EXPECT_EQ(cut_middle("pft [a] clients=1 mode=threads size=512M", 20).size(), 20u);
  EXPECT_EQ(cut_middle("abcdef", 3), "abc");
  // A two-byte character at the cut is kept whole or dropped whole.
  const std::string cut = cut_middle("ééééééééé", 9);
  EXPECT_LE(cut.size(), 9u);
  EXPECT_EQ(echo_input(cut), cut) << "a character was split";
}

}  // namespace nightjar

namespace nightjar {
namespace {

// utc_iso8601: the forms ISO 8601 / RFC 3339 and Google Benchmark write,
// normalised to UTC whole seconds; everything else refused.
TEST(UtcIso8601, NormalisesZonesAndRefusesWhatIsNotADate) {
  EXPECT_EQ(utc_iso8601("2026-12-01T23:41:59Z"), "2026-12-01T23:41:59Z");
  EXPECT_EQ(utc_iso8601("2026-12-01 23:41:59Z"), "2026-12-01T23:41:59Z");
  EXPECT_EQ(utc_iso8601("2026-12-01T23:41:59.123456Z"), "2026-12-01T23:41:59Z");
  EXPECT_EQ(utc_iso8601("2026-12-02T01:41:59+02:00"), "2026-12-01T23:41:59Z");
  EXPECT_EQ(utc_iso8601("2026-12-01T18:41:59-0500"), "2026-12-01T23:41:59Z");
  EXPECT_EQ(utc_iso8601("2024-02-29T00:00:00Z"), "2024-02-29T00:00:00Z");  // a leap year
  for (const char* bad :
       {"", "yesterday", "2026-12-01T23:41:59", "2026-02-30T00:00:00Z", "2025-02-29T00:00:00Z",
        "2026-13-01T00:00:00Z", "2026-12-01T24:00:00Z", "2026-12-01T23:60:00Z",
        "1969-12-31T23:59:59Z", "2026-12-01T23:41:59+25:00", "2026-12-01T23:41:59Zjunk",
        "2026-12-01T23:41:59.Z", "+026-12-01T23:41:59Z", "2026-1-01T23:41:59Z"})
    EXPECT_EQ(utc_iso8601(bad), std::nullopt) << bad;
}

}  // namespace
}  // namespace nightjar
