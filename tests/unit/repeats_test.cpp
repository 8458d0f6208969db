// Trouble that repeats is said once, then at most once a minute with a count, per cause.
#include <gtest/gtest.h>

#include "base/log.hpp"

using namespace mavswitch;

TEST(Repeats, OnceThenACountAMinutePerCause) {
  log::Repeats r;
  testing::internal::CaptureStderr();
  EXPECT_TRUE(r.say_at(log::Level::kError, "create", "cannot create a", 0));
  for (int64_t t = 1000; t < 60'000; t += 1000)
    EXPECT_FALSE(r.say_at(log::Level::kError, "create", "cannot create b", t));
  EXPECT_TRUE(r.say_at(log::Level::kError, "space", "no space", 30'000)) << "another cause is said at once";
  EXPECT_TRUE(r.say_at(log::Level::kError, "create", "cannot create c", 60'000));
  r.clear("create");
  EXPECT_TRUE(r.say_at(log::Level::kError, "create", "cannot create d", 61'000)) << "a cause that ended comes anew";
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err,
            "mavswitchd: error: cannot create a\n"
            "mavswitchd: error: no space\n"
            "mavswitchd: error: cannot create c (59 more times in the last 60 s)\n"
            "mavswitchd: error: cannot create d\n");
}

TEST(Repeats, RemembersABoundedNumberOfCauses) {
  log::Repeats r;
  testing::internal::CaptureStderr();
  for (size_t i = 0; i < 10 * log::Repeats::kCauses; ++i)
    EXPECT_TRUE(r.say_at(log::Level::kError, "cause " + std::to_string(i), "x", 0));
  EXPECT_TRUE(r.say_at(log::Level::kError, "cause 0", "x", 1)) << "long forgotten";
  EXPECT_FALSE(r.say_at(log::Level::kError, "cause 639", "x", 1)) << "the newest are remembered";
  testing::internal::GetCapturedStderr();
}

// A line held back as a repeat uses none of the gate's few a second: another cause's first line
// still gets through. A due line the gate refuses stays due, and its count goes on.
TEST(Repeats, OnlyLinesItWouldSayAskTheGate) {
  log::Repeats r;
  log::Throttle gate;
  testing::internal::CaptureStderr();
  EXPECT_TRUE(r.say_at(log::Level::kError, "flood", "flood", 0, &gate));
  for (int n = 0; n < 1000; ++n) EXPECT_FALSE(r.say_at(log::Level::kError, "flood", "flood", 0, &gate));
  EXPECT_TRUE(r.say_at(log::Level::kError, "other", "other", 0, &gate)) << "the repeats used up the gate";
  for (int n = 0; n < log::Throttle::kLines - 2; ++n)
    EXPECT_TRUE(r.say_at(log::Level::kError, "new " + std::to_string(n), "new", 0, &gate));
  EXPECT_FALSE(r.say_at(log::Level::kError, "flood", "flood", 60'000 - 1, &gate)) << "not due yet";
  EXPECT_FALSE(r.say_at(log::Level::kError, "refused", "refused", 0, &gate)) << "the gate's five are used";
  EXPECT_TRUE(r.say_at(log::Level::kError, "refused", "refused", 1000, &gate)) << "not remembered: said anew";
  EXPECT_TRUE(r.say_at(log::Level::kError, "flood", "flood", 60'000, &gate));
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("flood (1001 more times in the last 60 s)"), std::string::npos) << err;
}
