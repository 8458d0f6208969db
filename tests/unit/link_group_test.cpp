// Redundant links to one vehicle (Group, Priority): one healthy link carries what goes to the
// vehicle, failover when it falls silent, failback only after the primary has been healthy for
// a while, and what comes in twice is routed once.
#include <gtest/gtest.h>

#include <set>

#include "mavswitch/msg/attitude.hpp"
#include "routing/routing.hpp"
#include "support/frames.hpp"

using namespace mavswitch;
using routing::LinkId;
using routing::Verdict;
using Links = std::set<LinkId>;

namespace {

class LinkGroupTest : public ::testing::Test {
 protected:
  LinkGroupTest() {
    r.set_failover({.timeout = 1500, .failback = 5000, .dedup_window = 500});
    r.on_switch([this](const std::string& group, LinkId from, LinkId to) {
      EXPECT_EQ(group, "radio");
      switches.emplace_back(from, to);
    });
    routing::LinkPolicy p1, p2;
    p1.group = p2.group = r.group_index("radio");
    p1.priority = 1;
    p2.priority = 2;
    // The secondary first: the priority decides, not the order links came up in.
    radio2 = r.add_link(p2);
    radio1 = r.add_link(p1);
    gcs = r.add_link(routing::LinkPolicy{});
  }
  Links route(LinkId from, const test::Bytes& f, routing::Millis now, Verdict* verdict = nullptr) {
    Links to;
    const Verdict v = r.route(from, test::view_of(f), now, [&](LinkId l) { EXPECT_TRUE(to.insert(l).second); });
    if (verdict) *verdict = v;
    return to;
  }
  // The vehicle sends the same frame on the radios given (both, when both work).
  void vehicle_says(std::initializer_list<LinkId> on, routing::Millis now) {
    const auto f = test::heartbeat(1, 1, seq_++);
    for (LinkId l : on) route(l, f, now);
  }
  Links command_at(routing::Millis now) { return route(gcs, test::command_long(255, 190, 1, 1, seq_++), now); }

  routing::Routing r;
  LinkId radio1 = 0, radio2 = 0, gcs = 0;
  std::vector<std::pair<LinkId, LinkId>> switches;
  uint8_t seq_ = 0;
};

}  // namespace

TEST_F(LinkGroupTest, TrafficGoesOnTheBestHealthyLinkOnly) {
  vehicle_says({radio2, radio1}, 0);
  EXPECT_EQ(command_at(10), (Links{radio1}));
  EXPECT_EQ(route(gcs, test::heartbeat(255, 190, 3), 20), (Links{radio1})) << "broadcasts too";
}

TEST_F(LinkGroupTest, WhatComesInTwiceIsRoutedOnce) {
  const auto f = test::heartbeat(1, 1, 42);
  EXPECT_EQ(route(radio1, f, 0), (Links{gcs}));
  Verdict v;
  EXPECT_EQ(route(radio2, f, 30, &v), Links{});
  EXPECT_EQ(v, Verdict::kDuplicate);
  EXPECT_EQ(route(radio2, test::heartbeat(1, 1, 43), 40), (Links{gcs})) << "another sequence number: new";
  EXPECT_EQ(route(radio2, test::attitude(1, 1, 5, 42), 50), (Links{gcs})) << "another message: new";
  EXPECT_EQ(route(radio2, test::attitude(1, 1, 6, 42), 60), (Links{gcs})) << "another payload (CRC): new";
  EXPECT_EQ(route(radio1, f, 600), (Links{gcs})) << "after the window: new";
  EXPECT_EQ(r.group_stats().at(0).stats.duplicates, 1u);
}

// Two workers route the two copies; the second may carry a `now` read a little before the
// first's. It is still the same frame.
TEST_F(LinkGroupTest, ACopyRoutedWithAnEarlierClockIsStillADuplicate) {
  const auto f = test::heartbeat(1, 1, 9);
  EXPECT_EQ(route(radio1, f, 10'000), (Links{gcs}));
  Verdict v;
  EXPECT_EQ(route(radio2, f, 9'998, &v), Links{});
  EXPECT_EQ(v, Verdict::kDuplicate);
}

TEST_F(LinkGroupTest, FailsOverWhenThePrimaryFallsSilentAndBackOnlyOnceItHasSettled) {
  for (routing::Millis t = 0; t <= 1000; t += 250) vehicle_says({radio1, radio2}, t);
  EXPECT_EQ(command_at(1000), (Links{radio1}));
  for (routing::Millis t = 1250; t <= 3000; t += 250) vehicle_says({radio2}, t);  // the primary stops
  EXPECT_EQ(command_at(2400), (Links{radio1})) << "silent 1400 ms: within the timeout";
  EXPECT_EQ(command_at(2600), (Links{radio2})) << "silent 1600 ms: failed over";
  ASSERT_EQ(switches.size(), 1u);
  EXPECT_EQ(switches[0], std::make_pair(radio1, radio2));
  for (routing::Millis t = 3250; t <= 9000; t += 250) vehicle_says({radio1, radio2}, t);  // back at 3250
  EXPECT_EQ(command_at(8000), (Links{radio2})) << "healthy again for 4750 ms: not yet";
  EXPECT_EQ(command_at(8300), (Links{radio1})) << "healthy for 5 s: failback";
  ASSERT_EQ(switches.size(), 2u);
  EXPECT_EQ(r.group_stats().at(0).stats.failovers, 2u);
  EXPECT_EQ(command_at(20000), (Links{radio1, radio2})) << "none healthy: every way is tried";
}

TEST_F(LinkGroupTest, ARemovedActiveLinkHandsOver) {
  vehicle_says({radio1, radio2}, 0);
  EXPECT_EQ(command_at(10), (Links{radio1}));
  r.remove_link(radio1);
  EXPECT_EQ(command_at(20), (Links{radio2}));
}

// A frame between the vehicle's own components (here to its camera, behind both radios)
// goes back over neither radio, and does not choose the active member: chosen while only the
// secondary had been heard, it would keep the traffic from the primary for the failback delay.
TEST_F(LinkGroupTest, TheVehiclesOwnTrafficNeitherReturnsToItNorPicksTheActiveLink) {
  route(radio2, test::heartbeat(1, 100, 0), 0);  // learned on both: the radios reach one vehicle
  EXPECT_EQ(route(radio2, test::command_long(1, 1, 1, 100, 1), 0), Links{}) << "to its own camera";
  vehicle_says({radio2, radio1}, 5);
  EXPECT_EQ(command_at(10), (Links{radio1}));
  EXPECT_TRUE(switches.empty());
}
