// Lines a peer can cause: five a second, then a count of what was held back; a peer's bytes
// printed so that no line can be forged.
#include <gtest/gtest.h>

#include "base/log.hpp"

using namespace mavswitch;

TEST(Throttle, FiveLinesASecondThenTheNextSaysHowManyWereHeldBack) {
  log::Throttle t;
  for (int i = 0; i < log::Throttle::kLines; ++i) EXPECT_EQ(t.admit(1000 + i), 0u);
  for (int i = 0; i < 995; ++i) EXPECT_EQ(t.admit(1005 + i), log::Throttle::kRefused);
  EXPECT_EQ(t.admit(2000), 995u) << "a new second: the first line carries the count";
  EXPECT_EQ(t.admit(2001), 0u);
  EXPECT_EQ(t.held_back(), 995u);
}

TEST(Throttle, TheFirstSecondStartsAtTheFirstLine) {
  log::Throttle t;  // at any clock value, negative or huge: no overflow of the window
  for (int i = 0; i < log::Throttle::kLines; ++i) EXPECT_EQ(t.admit(-5'000'000'000 + i), 0u);
  EXPECT_EQ(t.admit(-5'000'000'000 + 10), log::Throttle::kRefused);
  EXPECT_EQ(t.admit(-5'000'000'000 + 1000), 1u);
}

TEST(Throttle, ALineCarriesTheCount) {
  log::Throttle t;
  testing::internal::CaptureStderr();
  for (int i = 0; i < 8; ++i) t.line(log::Level::kError, "peer {}", i);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err.find("peer 5"), std::string::npos);
  EXPECT_NE(err.find("peer 4"), std::string::npos);
}

TEST(Printable, ControlBytesAndBytesThatAreNotUtf8AreWrittenAsHex) {
  EXPECT_EQ(log::printable("plain text, é and 水"), "plain text, é and 水");
  EXPECT_EQ(log::printable("a\nforged: line"), "a\\x0aforged: line");
  EXPECT_EQ(log::printable("\x1b[2Jx"), "\\x1b[2Jx");
  EXPECT_EQ(log::printable("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(log::printable("\xe6\xb0"), "\\xe6\\xb0") << "a sequence cut short";
  EXPECT_EQ(log::printable(std::string_view("a\0b", 3)), "a\\x00b");
}

TEST(Printable, OverlongFormsSurrogatesAndCodePointsPastTheLastAreNotText) {
  EXPECT_EQ(log::printable("\xc0\xaf"), "\\xc0\\xaf") << "an overlong '/'";
  EXPECT_EQ(log::printable("\xe0\x80\xaf"), "\\xe0\\x80\\xaf");
  EXPECT_EQ(log::printable("\xf0\x83\x9b\x86"), "\\xf0\\x83\\x9b\\x86") << "the fuzz target's find";
  EXPECT_EQ(log::printable("\xed\xa0\x80"), "\\xed\\xa0\\x80") << "a surrogate";
  EXPECT_EQ(log::printable("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80") << "past U+10FFFF";
  EXPECT_EQ(log::printable("\xf0\x9f\x9a\x81"), "\xf0\x9f\x9a\x81") << "a helicopter stays one";
}
