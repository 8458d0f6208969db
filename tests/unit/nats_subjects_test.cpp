// The fleet fabric's subjects: what a frame is published on decides who receives it.
#include <gtest/gtest.h>

#include <algorithm>

#include "dialect/builtin.hpp"
#include "fabric/fabric_link.hpp"
#include "fabric/fabric_subjects.hpp"
#include "fabric/fleet_state.hpp"
#include "fabric/vehicle_map.hpp"
#include "mavswitch/msg/command_long.hpp"
#include "mavswitch/msg/param_request_read.hpp"
#include "support/frames.hpp"

using namespace mavswitch;

namespace {

// A configured vehicle of `map`, by its name; no system is taken by anyone else.
fabric::VehicleMap::Vehicle* configured(fabric::VehicleMap& map, std::string_view name) {
  bool numbered = false;
  return map.find(
      name, [](uint8_t) { return false; }, &numbered);
}

std::string subject(const test::Bytes& frame, std::string_view prefix = "mavlink") {
  std::string out = "what an earlier frame left";  // the buffer is reused: nothing of it stays
  fabric::fabric_subject(out, prefix, test::view_of(frame));
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
  EXPECT_EQ(fabric::interest_subject("fleet.a", 3), "fleet.a.to.3.>");
}

TEST(NatsSubjects, AnUnknownMessageByItsId) {
  test::Bytes f = test::heartbeat(1, 1);
  f[7] = 0x39;  // message id 0x30039: no dialect has it
  f[9] = 0x03;
  EXPECT_EQ(subject(f), "mavlink.from.1.1.196665");
}

TEST(NatsSubjects, SubjectsAndPatternsIntersectByNatsWildcards) {
  using fabric::subjects_intersect;
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

TEST(NatsSubjects, ANamedVehiclesSubjectsCarryItsName) {
  EXPECT_EQ(subject(test::heartbeat(1, 1), "mavlink.v1"), "mavlink.v1.from.1.1.HEARTBEAT");
  EXPECT_EQ(subject(test::command_long(255, 190, 1, 1), "mavlink.v2"), "mavlink.v2.to.1.1.COMMAND_LONG");
  EXPECT_EQ(fabric::interest_subject("mavlink.v2", 1), "mavlink.v2.to.1.>");
  EXPECT_EQ(fabric::subject_vehicle("mavlink.v2.from.1.1.HEARTBEAT", "mavlink"), "v2");
  EXPECT_EQ(fabric::subject_vehicle("fleet.mav.boat-7.to.255.190.COMMAND_ACK", "fleet.mav"), "boat-7");
  EXPECT_EQ(fabric::subject_vehicle("mavlink.from.1.1.HEARTBEAT", "mavlink"), "");
  EXPECT_EQ(fabric::subject_vehicle("mavlink.to.1.1.COMMAND_LONG", "mavlink"), "");
  EXPECT_EQ(fabric::subject_vehicle("mavlinkx.v2.from.1.1.HEARTBEAT", "mavlink"), "") << "another prefix";
  EXPECT_EQ(fabric::subject_vehicle("mavlink.v2", "mavlink"), "") << "no subject of the fabric";
}

TEST(VehicleMap, PatternsMatchRunsOfCharacters) {
  EXPECT_TRUE(fabric::name_matches("boat-*", "boat-7"));
  EXPECT_TRUE(fabric::name_matches("boat-*", "boat-"));
  EXPECT_TRUE(fabric::name_matches("*", "anything"));
  EXPECT_TRUE(fabric::name_matches("b*t-*-x", "boat-12-x"));
  EXPECT_TRUE(fabric::name_matches("*-x", "a-x-x"));
  EXPECT_FALSE(fabric::name_matches("boat-*", "boat"));
  EXPECT_FALSE(fabric::name_matches("boat-*", "car-1"));
  EXPECT_FALSE(fabric::name_matches("b*t-*-x", "boat-12-y"));
}

TEST(VehicleMap, ListedNamesFirstThenPatternsTakeTheFreeIds) {
  fabric::VehicleMap map("mavlink", {{"v1", 2}, {"v2", 0}, {"boat-*", 0}, {"v3", 1}});
  ASSERT_EQ(map.vehicles().size(), 3u) << "the names listed, at once";
  EXPECT_EQ(map.summary(), "v1=2 v3=1 v2=3");
  bool numbered = false;
  const auto none = [](uint8_t s) { return s == 4; };  // 4 is a system behind this router
  EXPECT_EQ(map.find("v2", none, &numbered)->system, 3);
  EXPECT_FALSE(numbered);
  const auto* boat = map.find("boat-a", none, &numbered);
  ASSERT_NE(boat, nullptr);
  EXPECT_TRUE(numbered);
  EXPECT_EQ(boat->system, 5) << "not 4: in use here";
  EXPECT_EQ(boat->root, "mavlink.boat-a");
  EXPECT_EQ(map.by_system(5), boat);
  EXPECT_EQ(map.find("car-1", none, &numbered), nullptr) << "not taken";
  for (int n = 0; n < 250; ++n) ASSERT_NE(map.find("boat-" + std::to_string(n), none, &numbered), nullptr) << n;
  EXPECT_EQ(map.find("boat-last", none, &numbered), nullptr) << "no id left: 255 in use, one of them here";
  EXPECT_EQ(map.vehicles().size(), 254u);
}

TEST(VehicleMap, ASilentPatternVehicleGivesItsIdBackWhenIdsRunShort) {
  fabric::VehicleMap map("mavlink", {{"boat-*", 0}});
  bool numbered = false;
  const auto none = [](uint8_t) { return false; };
  for (int n = 0; n < 255; ++n) {
    auto* v = map.find("boat-" + std::to_string(n), none, &numbered, 0, 5000);
    ASSERT_NE(v, nullptr) << n;
    ASSERT_TRUE(map.hold(*v, "router-" + std::to_string(n), 1000 + n, 5000));
  }
  EXPECT_EQ(map.find("boat-late", none, &numbered, 3000, 5000), nullptr) << "every id held, none silent 5 s";
  auto* late = map.find("boat-late", none, &numbered, 6000, 5000);
  ASSERT_NE(late, nullptr) << "boat-0, silent since 1000, gave its id";
  EXPECT_EQ(late->system, 1);
  auto* first = map.find("boat-0", none, &numbered, 60'000, 5000);
  ASSERT_NE(first, nullptr) << "heard again: an id again, as one is free";
  EXPECT_NE(first->system, 0);
}

TEST(VehicleMap, TheFirstRouterHoldsANameUntilItIsSilent) {
  fabric::VehicleMap map("mavlink", {{"boat-1", 11}});
  auto* v = configured(map, "boat-1");
  ASSERT_NE(v, nullptr);
  EXPECT_TRUE(map.hold(*v, "a", 1000, 5000));
  EXPECT_FALSE(map.hold(*v, "b", 1500, 5000)) << "a second router in the name";
  EXPECT_TRUE(map.hold(*v, "a", 2000, 5000));
  EXPECT_FALSE(map.hold(*v, "b", 6999, 5000));
  EXPECT_TRUE(map.hold(*v, "b", 7000, 5000)) << "a silent 5 s: the name passes";
  EXPECT_FALSE(map.hold(*v, "a", 7100, 5000));
  EXPECT_NE(fabric::fleet_conflict_metrics().find(R"(vehicle="boat-1",holder="a",refused="b"} 2)"), std::string::npos)
      << fabric::fleet_conflict_metrics();
}

// Found by fabric_fuzz: a message with no reply subject (no router's) took a free name, and
// every router sending in that name was refused until the anonymous publisher fell silent.
TEST(VehicleMap, AMessageWithNoReplySubjectHoldsNoName) {
  fabric::VehicleMap map("mavlink", {{"boat-1", 11}});
  auto* v = configured(map, "boat-1");
  ASSERT_NE(v, nullptr);
  EXPECT_FALSE(map.hold(*v, "", 1000, 5000)) << "no router said it";
  EXPECT_TRUE(map.hold(*v, "mavlink.origin.1-2", 1100, 5000)) << "the first router's, at once";
  EXPECT_FALSE(map.hold(*v, "", 1200, 5000));
}

// Found by fabric_fuzz: a publisher that makes up a new origin for each message got one error
// line for each (a line is said once a minute for each name and origin).
TEST(VehicleMap, OriginsMadeUpForEveryMessageCostAFewLinesASecond) {
  fabric::VehicleMap map("mavlink", {{"boat-2", 12}});
  auto* v = configured(map, "boat-2");
  ASSERT_NE(v, nullptr);
  ASSERT_TRUE(map.hold(*v, "mavlink.origin.1-2", 1000, 5000));
  testing::internal::CaptureStderr();
  for (int n = 0; n < 1000; ++n) ASSERT_FALSE(map.hold(*v, "made-up-" + std::to_string(n), 1500, 5000));
  const std::string said = testing::internal::GetCapturedStderr();
  const auto lines = std::count(said.begin(), said.end(), '\n');
  EXPECT_GE(lines, 1) << "the conflict is said";
  EXPECT_LE(lines, log::Throttle::kLines) << said;
}

// A router that keeps sending as a held name is said once a minute; its refusals in between used
// up the few lines a second, so a second router's conflict went unsaid.
TEST(VehicleMap, OneRouterRefusedOverAndOverLeavesRoomForAnothersConflict) {
  fabric::VehicleMap map("mavlink", {{"boat-2", 12}});
  auto* v = configured(map, "boat-2");
  ASSERT_NE(v, nullptr);
  ASSERT_TRUE(map.hold(*v, "mavlink.origin.1-2", 1000, 5000));
  testing::internal::CaptureStderr();
  for (int n = 0; n < 1000; ++n) ASSERT_FALSE(map.hold(*v, "mavlink.origin.3-4", 1500, 5000));
  ASSERT_FALSE(map.hold(*v, "mavlink.origin.5-6", 1500, 5000));
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_EQ(std::count(said.begin(), said.end(), '\n'), 2) << said;
  EXPECT_NE(said.find("router mavlink.origin.5-6 sends as boat-2"), std::string::npos) << said;
}

// A publisher cycling through made-up names a pattern takes had every one numbered, and a silent
// one's id taken back for it: a line for each, 3,713 lines for 3,000 names at one time.
TEST(VehicleMap, NamesMadeUpToCycleTheIdsCostAFewLinesASecond) {
  fabric::VehicleMap map("mavlink", {{"boat-*", 0}});
  bool numbered = false;
  const auto none = [](uint8_t) { return false; };
  testing::internal::CaptureStderr();
  int taken = 0;
  for (int n = 0; n < 3000; ++n)
    taken += map.find("boat-" + std::to_string(n % 600), none, &numbered, 10'000, 1000) != nullptr;
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_EQ(taken, 3000) << "each numbered, a silent one's id taken back";
  EXPECT_LE(std::count(said.begin(), said.end(), '\n'), log::Throttle::kLines) << said;
}

TEST(VehicleMap, NamesHeardFollowTheConfiguredRule) {
  fabric::VehicleMap map("mavlink", {{"*", 0}});
  bool numbered = false;
  const auto none = [](uint8_t) { return false; };
  EXPECT_NE(map.find("boat_1-x", none, &numbered), nullptr);
  EXPECT_EQ(map.find("bo\x1b[2Jat", none, &numbered), nullptr);
  EXPECT_EQ(map.find("b\xff", none, &numbered), nullptr);
  EXPECT_EQ(map.find(std::string(65, 'a'), none, &numbered), nullptr);
  EXPECT_EQ(map.find("origin", none, &numbered), nullptr);
}

TEST(FabricOrigins, TheRouterThatBeganFirstHoldsANameOnATieTheSmallerId) {
  EXPECT_TRUE(fabric::began_before("mavlink.origin.18c-0000000000000002", "mavlink.origin.18d-0000000000000001"));
  EXPECT_FALSE(fabric::began_before("mavlink.origin.18d-0000000000000001", "mavlink.origin.18c-0000000000000002"));
  EXPECT_TRUE(fabric::began_before("fleet.origin.18c-01", "fleet.origin.18c-02"));
  EXPECT_FALSE(fabric::began_before("mavlink.origin.impostor", "mavlink.origin.18c-01")) << "not ours: not yielded to";
  EXPECT_FALSE(fabric::began_before("mavlink.origin.18c-01", "mavlink.origin.18c-01zz"));
}
