// What shapes a link's traffic, without sockets: message classes, per-message rate limits, and
// the paced queue of a link with a bandwidth budget.
#include <gtest/gtest.h>

#include "mavswitch/msg/param_value.hpp"
#include "mavswitch/msg/vfr_hud.hpp"
#include "protocol/message_class.hpp"
#include "support/frames.hpp"
#include "transport/pacer.hpp"
#include "transport/rate_limit.hpp"

using namespace mavswitch;
using protocol::MessageClass;

TEST(MessageClass, ProtocolsAndTargetedFramesAreControl) {
  EXPECT_EQ(protocol::classify(test::view_of(test::command_long(255, 190, 1, 1))), MessageClass::kControl);
  EXPECT_EQ(protocol::classify(test::view_of(test::frame_of(msg::ParamValue{}, 1, 1))), MessageClass::kControl);
  EXPECT_EQ(protocol::classify(test::view_of(test::heartbeat(1, 1))), MessageClass::kStatus);
  EXPECT_EQ(protocol::classify(test::view_of(test::attitude(1, 1, 0))), MessageClass::kTelemetry);
}

namespace {
constexpr uint32_t kAttitude = 30;

// Frames of `make` every `period_us` for `seconds`: how many the limiter lets through.
template <class Make>
int admitted(transport::RateLimiter& limiter, Make make, int64_t period_us, int seconds) {
  int n = 0;
  for (int64_t t = 0; t < int64_t{seconds} * 1'000'000; t += period_us) n += limiter.admit(test::view_of(make(t)), t);
  return n;
}
}  // namespace

TEST(RateLimit, NamedAndOtherMessagesAtTheirRates) {
  transport::RateLimits limits;
  limits.add(kAttitude, 15);
  limits.others = 2;
  transport::RateLimiter limiter(limits);
  auto attitude = [](int64_t t) { return test::attitude(1, 1, static_cast<uint32_t>(t / 1000)); };
  EXPECT_NEAR(admitted(limiter, attitude, 20'000, 10), 150, 15) << "50 Hz limited to 15";
  auto hud = [](int64_t) { return test::frame_of(msg::VfrHud{}, 1, 1); };
  EXPECT_NEAR(admitted(limiter, hud, 10'000, 10), 20, 2) << "100 Hz limited by *:2";
  auto other_source = [](int64_t t) { return test::attitude(2, 1, static_cast<uint32_t>(t / 1000)); };
  EXPECT_NEAR(admitted(limiter, other_source, 20'000, 10), 150, 15) << "each source its own";
}

TEST(RateLimit, ProtocolMessagesAndTargetedFramesPassUnlessNamed) {
  transport::RateLimits limits;
  limits.others = 1;
  transport::RateLimiter limiter(limits);
  auto param = [](int64_t) { return test::frame_of(msg::ParamValue{}, 1, 1); };
  EXPECT_EQ(admitted(limiter, param, 1000, 1), 1000);
  auto command = [](int64_t) { return test::command_long(255, 190, 1, 1); };
  EXPECT_EQ(admitted(limiter, command, 1000, 1), 1000);
  limits.add(76, 10);  // COMMAND_LONG named: limited after all
  EXPECT_NEAR(admitted(limiter, command, 1000, 1), 10, 1);
}

TEST(RateLimit, AFlowOfInventedSourcesCannotGrowTheTable) {
  transport::RateLimits limits;
  limits.others = 1;
  transport::RateLimiter limiter(limits);
  for (int i = 0; i < 100'000; ++i) limiter.admit(test::view_of(test::attitude(uint8_t(i), uint8_t(i >> 8), 0)), i);
  EXPECT_LE(limiter.streams(), 4096u);
}

namespace {
struct Sent {
  std::vector<test::Bytes> frames;
  void operator()(std::span<const uint8_t> f) { frames.emplace_back(f.begin(), f.end()); }
};
void push(transport::Pacer& p, const test::Bytes& f, transport::Millis now) {
  const auto v = test::view_of(f);
  p.push(protocol::classify(v), protocol::stream_key(v), f, now);
}
}  // namespace

TEST(Pacer, KeepsToItsBudget) {
  transport::Pacer pacer(5760, 250);
  Sent sent;
  size_t bytes = 0;
  for (transport::Millis t = 0; t < 10'000; t += 5) {  // 50 kB/s of telemetry offered, 10 s
    for (uint8_t s = 1; s <= 6; ++s) push(pacer, test::attitude(s, 1, uint32_t(t)), t);
    pacer.release(t, sent);
  }
  for (const auto& f : sent.frames) bytes += f.size();
  EXPECT_NEAR(double(bytes), 57'600.0, 600.0);
  EXPECT_GT(pacer.counts().superseded, 1000u) << "the newest value replaced the waiting one";
}

TEST(Pacer, ControlGoesFirstAndNothingStaleGoesOut) {
  transport::Pacer pacer(5760, 250);
  Sent sent;
  for (uint8_t s = 1; s <= 100; ++s) push(pacer, test::attitude(s, 1, 0), 0);  // a backlog of telemetry
  push(pacer, test::attitude(100, 1, 7), 0);  // a newer value of a waiting stream: in its place
  EXPECT_EQ(pacer.held_bytes(), 100 * test::attitude(1, 1, 0).size()) << "what waits: the queue's fill";
  pacer.release(0, sent);
  const size_t before = sent.frames.size();
  push(pacer, test::command_long(255, 190, 1, 1), 1);
  const transport::Millis wait = pacer.release(1, sent);
  EXPECT_GE(wait, 1);
  EXPECT_LE(wait, 50) << "only the frame ahead of it is waited for";
  pacer.release(1 + wait, sent);
  ASSERT_GT(sent.frames.size(), before);
  EXPECT_EQ(test::view_of(sent.frames[before]).msgid(), 76u) << "the command before the backlog";
  Sent later;
  pacer.release(1000, later);  // the rest of the backlog is now 1 s old: dropped, not sent
  EXPECT_TRUE(later.frames.empty());
  EXPECT_TRUE(pacer.empty());
  EXPECT_EQ(pacer.held_bytes(), 0u);
  EXPECT_GT(pacer.counts().dropped[size_t(MessageClass::kTelemetry)], 50u);
}

TEST(Pacer, ControlIsNeverThinnedOnlyBoundedInCount) {
  transport::Pacer pacer(1000, 250);
  Sent sent;
  for (int i = 0; i < 300; ++i) push(pacer, test::frame_of(msg::ParamValue{}, 1, 1, uint8_t(i)), 0);
  EXPECT_EQ(pacer.counts().dropped[size_t(MessageClass::kControl)], 300u - transport::Pacer::kControlFrames);
  for (transport::Millis t = 0; t < 60'000 && !pacer.empty(); t += 10) pacer.release(t, sent);
  EXPECT_EQ(sent.frames.size(), transport::Pacer::kControlFrames) << "old but all sent";
}

// A link's wishes (the router's message rates): the stream named at its interval, the newest
// passing; off: none; a wish taken back (0): all again; other streams untouched.
TEST(StreamWishes, EachStreamAtItsWishOthersUntouched) {
  transport::StreamWishes wishes;
  EXPECT_TRUE(wishes.empty());
  wishes.set(1, 1, 30, 200'000);  // ATTITUDE from 1/1 at 5 Hz
  const auto fast = test::attitude(1, 1, 0), other = test::attitude(2, 1, 0);
  int passed = 0, others = 0;
  for (int64_t t = 0; t < 2'000'000; t += 20'000) {  // 50 Hz for two seconds
    passed += wishes.admit(test::view_of(fast), t);
    others += wishes.admit(test::view_of(other), t);
  }
  EXPECT_EQ(passed, 10) << "5 Hz of 50";
  EXPECT_EQ(others, 100) << "another source's stream is not the wish's";
  wishes.set(1, 1, 30, transport::StreamWishes::kOff);
  EXPECT_FALSE(wishes.admit(test::view_of(fast), 3'000'000));
  wishes.set(1, 1, 30, 0);
  EXPECT_TRUE(wishes.admit(test::view_of(fast), 3'000'001));
  EXPECT_TRUE(wishes.empty());
}
