// The fleet fabric's subjects: what a frame is published on decides who receives it.
#include <gtest/gtest.h>

#include "dialect/builtin.hpp"
#include "fabric/fabric_subjects.hpp"
#include "mavswitch/msg/command_long.hpp"
#include "mavswitch/msg/param_request_read.hpp"
#include "support/frames.hpp"

using namespace mavswitch;

namespace {

std::string subject(const test::Bytes& frame, std::string_view prefix = "mavlink") {
  std::string out = "what an earlier frame left";  // the buffer is reused: nothing of it stays
  daemon::fabric_subject(out, prefix, test::view_of(frame));
  return out;
}

}  // namespace

TEST(NatsSubjects, BroadcastsByTheirSourceAndMessage) {
  EXPECT_EQ(subject(test::heartbeat(1, 1)), "mavlink.from.1.1.HEARTBEAT");
  EXPECT_EQ(subject(test::attitude(42, 200, 0)), "mavlink.from.42.200.ATTITUDE");
  EXPECT_EQ(subject(test::frame_of(msg::CommandLong{}, 255, 190, 0, true)), "mavlink.from.255.190.COMMAND_LONG")
      << "a v1 frame, target 0: broadcast";
}

TEST(NatsSubjects, TargetedFramesByTheirTarget) {
  EXPECT_EQ(subject(test::command_long(255, 190, 1, 1)), "mavlink.to.1.1.COMMAND_LONG");
  msg::ParamRequestRead p;
  p.target_system = 7;  // component 0: every component of system 7
  EXPECT_EQ(subject(test::frame_of(p, 255, 190)), "mavlink.to.7.0.PARAM_REQUEST_READ");
  EXPECT_EQ(subject(test::command_long(255, 190, 3, 1), "fleet.a"), "fleet.a.to.3.1.COMMAND_LONG");
  EXPECT_EQ(daemon::interest_subject("fleet.a", 3), "fleet.a.to.3.>");
}

TEST(NatsSubjects, AnUnknownMessageByItsId) {
  test::Bytes f = test::heartbeat(1, 1);
  f[7] = 0x39;  // message id 0x30039: no dialect has it
  f[9] = 0x03;
  EXPECT_EQ(subject(f), "mavlink.from.1.1.196665");
}

TEST(NatsSubjects, SubjectsAndPatternsIntersectByNatsWildcards) {
  using daemon::subjects_intersect;
  EXPECT_TRUE(subjects_intersect("m.from.1.1.HEARTBEAT", "m.from.1.1.HEARTBEAT"));
  EXPECT_TRUE(subjects_intersect("m.from.>", "m.from.1.1.HEARTBEAT"));
  EXPECT_TRUE(subjects_intersect("m.from.*.*.HEARTBEAT", "m.from.7.1.HEARTBEAT"));
  EXPECT_TRUE(subjects_intersect("m.from.>", "m.from.*.*.HEARTBEAT")) << "two patterns";
  EXPECT_TRUE(subjects_intersect("m.to.>", "m.to.3.>"));
  EXPECT_TRUE(subjects_intersect("m.*.3.>", "m.to.*.1.COMMAND_LONG"));
  EXPECT_FALSE(subjects_intersect("m.to.3.>", "m.to.4.>"));
  EXPECT_FALSE(subjects_intersect("m.from.*.*.HEARTBEAT", "m.from.7.1.ATTITUDE"));
  EXPECT_FALSE(subjects_intersect("m.from.>", "m.from")) << "\">\" takes one token or more";
  EXPECT_FALSE(subjects_intersect("m.from.*", "m.from.1.1")) << "\"*\" takes exactly one";
  EXPECT_FALSE(subjects_intersect("m.from.1", "m.from.1.1"));
}
