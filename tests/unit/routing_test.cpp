// The routing rules, as a table of cases, without sockets.
#include <gtest/gtest.h>

#include <set>
#include <thread>
#include <vector>

#include "dialect/builtin.hpp"
#include "dialect/typed_message.hpp"
#include "mavswitch/msg/command_long.hpp"
#include "mavswitch/msg/heartbeat.hpp"
#include "mavswitch/msg/param_request_list.hpp"
#include "mavswitch/msg/system_time.hpp"
#include "protocol/parser.hpp"
#include "routing/routing.hpp"
#include "support/frames.hpp"

using namespace mavswitch;
using routing::LinkId;
using routing::Verdict;

namespace {

// Frames from the tests' one builder, kept with their bytes so a view of them stays valid.
struct Frame {
  test::Bytes bytes;
  protocol::FrameView view() const { return test::view_of(bytes); }
};
Frame heartbeat(uint8_t sys, uint8_t comp) { return {test::frame_of(msg::Heartbeat{}, sys, comp)}; }
Frame command(uint8_t sys, uint8_t comp, uint8_t tsys, uint8_t tcomp) {
  return {test::command_long(sys, comp, tsys, tcomp)};
}
Frame system_time(uint8_t sys, uint32_t boot_ms) {
  msg::SystemTime t;
  t.time_boot_ms = boot_ms;
  t.time_unix_usec = 1;
  return {test::frame_of(t, sys, 1)};
}

class RoutingTest : public ::testing::Test {
 protected:
  LinkId add(routing::LinkPolicy p = {}) { return r.add_link(std::move(p)); }
  std::set<LinkId> route(LinkId from, const Frame& f, routing::Millis now = 0, Verdict* verdict = nullptr) {
    std::set<LinkId> to;
    const Verdict v =
        r.route(from, f.view(), now, [&](LinkId l) { EXPECT_TRUE(to.insert(l).second) << "delivered twice"; });
    if (verdict) *verdict = v;
    return to;
  }
  routing::Routing r;
};

using Links = std::set<LinkId>;

}  // namespace

TEST_F(RoutingTest, BroadcastGoesEverywhereButBack) {
  const LinkId a = add(), b = add(), c = add();
  EXPECT_EQ(route(a, heartbeat(1, 1)), (Links{b, c}));
  EXPECT_EQ(route(b, heartbeat(255, 190)), (Links{a, c}));
}

TEST_F(RoutingTest, TargetedGoesOnlyWhereTheTargetWasHeard) {
  const LinkId vehicle = add(), gcs = add(), other = add();
  route(vehicle, heartbeat(1, 1));
  route(gcs, heartbeat(255, 190));
  EXPECT_EQ(route(gcs, command(255, 190, 1, 1)), (Links{vehicle}));
  EXPECT_EQ(route(vehicle, command(1, 1, 255, 190)), (Links{gcs}));
  EXPECT_EQ(route(other, command(9, 9, 1, 0)), (Links{vehicle})) << "component 0: any component of the system";
}

TEST_F(RoutingTest, UnknownComponentFallsBackToItsSystem) {
  const LinkId vehicle = add(), gcs = add();
  route(vehicle, heartbeat(1, 1));
  EXPECT_EQ(route(gcs, command(255, 190, 1, 154)), (Links{vehicle}));
}

TEST_F(RoutingTest, UnknownTargetIsDroppedAndCountedNotFlooded) {
  const LinkId a = add(), b = add();
  add();
  route(a, heartbeat(1, 1));
  Verdict v;
  EXPECT_EQ(route(b, command(255, 190, 7, 1), 0, &v), Links{});
  EXPECT_EQ(v, Verdict::kUnknownTarget);
  EXPECT_EQ(r.stats().unknown_target, 1u);
  EXPECT_EQ(r.link_stats(b).unknown_target, 1u) << "counted on the link it came in on";
  EXPECT_EQ(r.link_stats(a).unknown_target, 0u);
}

TEST_F(RoutingTest, ComponentAddressedGoesToThatComponentsLinkOnly) {
  const LinkId autopilot = add(), camera = add(), gcs = add();
  route(autopilot, heartbeat(1, 1));
  route(camera, heartbeat(1, 100));
  EXPECT_EQ(route(gcs, command(255, 190, 1, 100)), (Links{camera}));
  EXPECT_EQ(route(gcs, command(255, 190, 1, 1)), (Links{autopilot}));
  EXPECT_EQ(route(gcs, command(255, 190, 1, 0)), (Links{autopilot, camera}));
}

TEST_F(RoutingTest, NeverBackToTheSourceLinkEvenWhenTargeted) {
  const LinkId a = add();
  add();
  route(a, heartbeat(1, 1));
  route(a, heartbeat(2, 1));
  EXPECT_EQ(route(a, command(2, 1, 1, 1)), Links{}) << "both live on a: nothing to forward";
}

TEST_F(RoutingTest, BroadcastSkipsLinksWhereItsSourceLives) {
  // The vehicle reaches us over two paths (a loop through another router): its broadcast from
  // one path must not go out the other.
  const LinkId path1 = add(), path2 = add(), gcs = add();
  route(path1, heartbeat(1, 1));
  route(path2, heartbeat(1, 1));
  EXPECT_EQ(route(path1, heartbeat(1, 1)), (Links{gcs}));
  EXPECT_EQ(route(path2, heartbeat(1, 1)), (Links{gcs}));
  EXPECT_EQ(route(gcs, command(255, 190, 1, 1)), (Links{path1, path2}));
}

TEST_F(RoutingTest, TruncatedPayloadMeansZeroTargetIsBroadcast) {
  const LinkId a = add(), b = add(), c = add();
  msg::ParamRequestList all_zero;  // target 0/0: the v2 payload is truncated to one byte
  const Frame f{test::frame_of(all_zero, 255, 190)};
  ASSERT_EQ(f.view().payload_len(), 1);
  EXPECT_EQ(route(a, f), (Links{b, c}));
}

TEST_F(RoutingTest, FiltersInAndOut) {
  routing::LinkPolicy no_heartbeats_out;
  no_heartbeats_out.out.block_msg.add(msg::Heartbeat::kId);
  routing::LinkPolicy only_sys1_in;
  only_sys1_in.in.allow_sys.add(1);
  routing::LinkPolicy comp_blocked_out;
  comp_blocked_out.out.block_comp.add(190);
  const LinkId a = add(only_sys1_in), b = add(no_heartbeats_out), c = add(comp_blocked_out), d = add();
  EXPECT_EQ(route(a, heartbeat(1, 1)), (Links{c, d}));
  Verdict v;
  EXPECT_EQ(route(a, heartbeat(2, 1), 0, &v), Links{});
  EXPECT_EQ(v, Verdict::kFilteredIn);
  EXPECT_EQ(route(d, command(255, 190, 0, 0)), (Links{a, b}));
  EXPECT_EQ(r.filtered_out(b), 1u);
  EXPECT_EQ(r.filtered_out(c), 1u);
  EXPECT_EQ(r.stats().filtered_in, 1u);
  EXPECT_EQ(r.link_stats(a).filtered_in, 1u);
}

TEST_F(RoutingTest, GroupsShareWhatTheyLearn) {
  routing::LinkPolicy radio;
  radio.group = r.group_index("radios");
  const LinkId radio1 = add(radio), radio2 = add(radio), gcs = add();
  route(radio1, heartbeat(1, 1));  // heard on one radio only: the other knows the way too
  EXPECT_TRUE(r.routes().knows(1, 1));
  EXPECT_EQ(route(gcs, command(255, 190, 1, 1)), (Links{radio1})) << "the healthy radio only";
  EXPECT_EQ(route(radio2, Frame{test::heartbeat(1, 1, 7)}), (Links{gcs})) << "not echoed to the twin radio";
}

TEST_F(RoutingTest, SnifferReceivesEverything) {
  r.set_sniffer_sysid(253);
  const LinkId vehicle = add(), gcs = add(), sniffer = add();
  route(sniffer, heartbeat(253, 1));
  route(vehicle, heartbeat(1, 1));
  route(gcs, heartbeat(255, 190));
  EXPECT_EQ(route(gcs, command(255, 190, 1, 1)), (Links{vehicle, sniffer}));
  EXPECT_EQ(route(gcs, command(255, 190, 77, 1)), (Links{sniffer})) << "even an unknown target";
}

TEST_F(RoutingTest, DuplicatesWithinThePeriodAreDropped) {
  r.set_dedup_period(100);
  const LinkId radio1 = add(), radio2 = add(), gcs = add();
  const Frame hb = heartbeat(1, 1);
  EXPECT_EQ(route(radio1, hb, 1000), (Links{radio2, gcs}));
  Verdict v;
  EXPECT_EQ(route(radio2, hb, 1050, &v), Links{});
  EXPECT_EQ(v, Verdict::kDuplicate);
  EXPECT_EQ(route(radio2, hb, 1300), (Links{gcs})) << "after the period it is new again";
  EXPECT_EQ(r.stats().duplicates, 1u);
}

TEST_F(RoutingTest, RoutesAgeOut) {
  r.set_route_timeout(5000);
  const LinkId vehicle = add(), gcs = add();
  route(vehicle, heartbeat(1, 1), 1000);
  r.expire(4000);
  EXPECT_EQ(route(gcs, command(255, 190, 1, 1), 4000), (Links{vehicle}));
  EXPECT_EQ(r.routes().known_count(), 2u) << "the vehicle and the ground station";
  r.expire(6500);
  Verdict v;
  route(gcs, command(255, 190, 1, 1), 6500, &v);
  EXPECT_EQ(v, Verdict::kUnknownTarget);
  EXPECT_EQ(r.routes().known_count(), 1u) << "the ground station, heard again; the vehicle aged out";
}

TEST_F(RoutingTest, RebootClearsTheRebootedComponentsRoutesOnly) {
  const LinkId old_path = add(), new_path = add(), gcs = add();
  route(old_path, heartbeat(1, 1));
  route(old_path, heartbeat(1, 100));
  route(new_path, system_time(1, 50000));
  EXPECT_EQ(route(gcs, command(255, 190, 1, 1)), (Links{old_path, new_path}));
  route(new_path, system_time(1, 1200));  // time_boot_ms went backwards: it rebooted
  EXPECT_EQ(r.stats().reboots, 1u);
  EXPECT_EQ(route(gcs, command(255, 190, 1, 1)), (Links{new_path})) << "the old path's routes are gone";
  EXPECT_EQ(route(gcs, command(255, 190, 1, 100)), (Links{old_path})) << "the camera did not reboot: it keeps its link";
}

// When a component was last heard, on any of its links (what the operator's window shows; what
// its HEARTBEAT said is a subscriber's business: window/vehicle_watch).
TEST_F(RoutingTest, AComponentsLastHeardIsKept) {
  const LinkId a = add(), b = add();
  EXPECT_EQ(r.routes().last_heard(1, 1), 0) << "nothing heard yet";
  route(a, {test::frame_of(msg::Heartbeat{}, 1, 1)}, 1000);
  route(b, command(255, 190, 1, 1), 1500);
  EXPECT_EQ(r.routes().last_heard(1, 1), 1000);
  route(a, system_time(1, 5), 2500);
  EXPECT_EQ(r.routes().last_heard(1, 1), 2500);
  EXPECT_EQ(r.routes().last_heard(255, 190), 1500);
}

TEST_F(RoutingTest, UnknownMessageIdsAreBroadcastUnlessAPolicyDrops) {
  routing::LinkPolicy strict;
  strict.drop_unknown_ids = true;
  const LinkId a = add(), b = add(), strict_link = add(strict);
  const uint8_t payload[4] = {1, 2, 3, 4};
  Frame unknown{std::vector<uint8_t>(protocol::kMaxFrameLen)};
  unknown.bytes.resize(protocol::encode_v2({.sysid = 5, .compid = 1, .msgid = 0xABCDEF}, payload, 0, unknown.bytes));
  ASSERT_FALSE(unknown.view().verified());
  EXPECT_EQ(route(a, unknown), (Links{b}));
  EXPECT_EQ(r.stats().unknown_ids_forwarded, 1u);
  Verdict v;
  EXPECT_EQ(route(strict_link, unknown, 0, &v), Links{});
  EXPECT_EQ(v, Verdict::kUnknownIdDropped);
}

TEST_F(RoutingTest, RemovedLinkTakesItsRoutesAndIdIsReused) {
  const LinkId vehicle = add(), gcs = add();
  route(vehicle, heartbeat(1, 1));
  r.remove_link(vehicle);
  Verdict v;
  route(gcs, command(255, 190, 1, 1), 0, &v);
  EXPECT_EQ(v, Verdict::kUnknownTarget);
  EXPECT_EQ(add(), vehicle);
}

// A peer that sends from every made-up component of a vehicle's system: the vehicle's own
// component is still routed to on its own link only, the made-up ones on the peer's, the whole
// system on both. When the made-up ones fall silent and age out, a command to one of them falls
// back to the system (the vehicle), and one heard again is routed to again.
TEST_F(RoutingTest, MadeUpComponentsOfASystemLeaveItsRealOnesAlone) {
  r.set_route_timeout(5000);
  const LinkId vehicle = add(), gcs = add(), sprayer = add();
  for (int c = 2; c < 256; ++c) route(sprayer, heartbeat(1, static_cast<uint8_t>(c)), 1000);
  route(vehicle, heartbeat(1, 1), 1000);
  EXPECT_EQ(route(vehicle, heartbeat(1, 1), 1000), (Links{gcs, sprayer}))
      << "a broadcast skips only its source's links";
  EXPECT_EQ(route(gcs, command(255, 190, 1, 1), 1000), (Links{vehicle}));
  EXPECT_EQ(route(gcs, command(255, 190, 1, 77), 1000), (Links{sprayer}));
  EXPECT_EQ(route(gcs, command(255, 190, 1, 0), 1000), (Links{vehicle, sprayer}));
  route(vehicle, heartbeat(1, 1), 6500);  // the vehicle keeps talking; the sprayer stopped at 1000
  r.expire(6500);
  EXPECT_EQ(route(gcs, command(255, 190, 1, 77), 6500), (Links{vehicle})) << "unknown again: the system";
  EXPECT_EQ(route(gcs, command(255, 190, 1, 0), 6500), (Links{vehicle}));
  route(sprayer, heartbeat(1, 77), 6600);
  EXPECT_EQ(route(gcs, command(255, 190, 1, 77), 6600), (Links{sprayer}));
}

// The index of a system's components is read without locks while another worker adds to it:
// one thread learns 254 new components of a vehicle's system (as a worker hearing a spray
// would), while this one keeps sending commands to the whole system; every one reaches the
// vehicle, and afterwards the new components' link too. (Run under ThreadSanitizer in CI.)
TEST_F(RoutingTest, ComponentsLearntOnOneThreadAreWalkedSafelyOnAnother) {
  const LinkId vehicle = add(), gcs = add(), sprayer = add();
  route(vehicle, heartbeat(1, 1), 1000);
  std::vector<Frame> spray;
  for (int c = 2; c < 256; ++c) spray.push_back(heartbeat(1, static_cast<uint8_t>(c)));
  routing::RoutingContext& other = r.add_context();
  std::thread learner([&] {
    for (const Frame& f : spray) r.route(other, sprayer, f.view(), 1000, [](LinkId) {});
  });
  const Frame to_system = command(255, 190, 1, 0);
  for (int i = 0; i < 2000; ++i) ASSERT_EQ(route(gcs, to_system, 1000).count(vehicle), 1u) << i;
  learner.join();
  EXPECT_EQ(route(gcs, to_system, 1000), (Links{vehicle, sprayer}));
}
