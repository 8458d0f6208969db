// Who receives what over the fleet fabric (real three-node nats-server cluster on loopback): a
// vehicle's router that asks only for the ground stations' broadcasts gets nothing else,
// subscriptions that overlap still route each frame once, and the endpoint's filters act.
#include <gtest/gtest.h>

#include <regex>

#include "e2e/http_client.hpp"
#include "e2e/nats_site.hpp"
#include "mavswitch/msg/attitude.hpp"
#include "mavswitch/msg/command_ack.hpp"

using namespace mavswitch;
using namespace mavswitch::test;

TEST_F(Fabric, AVehicleAskingForTheGroundStationsOnlyGetsNoOtherVehicle) {
  NatsCluster cluster;
  ASSERT_TRUE(cluster.ready()) << cluster.log(0);
  const uint16_t http = free_tcp_port();
  Site a(scratch_, "a", "Url = " + cluster.url(0) + "\nSubscribe = from.255.>\n", "127.0.0.1:" + std::to_string(http));
  Site b(scratch_, "b", "Url = " + cluster.url(1) + "\n");
  Site c(scratch_, "c", "Url = " + cluster.url(2) + "\n");
  ASSERT_TRUE(all_heard({{&a, 1}, {&b, 255}, {&c, 2}}, {{&a, 255}, {&b, 1}, {&b, 2}})) << a.router->err();
  for (uint32_t i = 0; i < 200; ++i) c.send(attitude(2, 1, i, static_cast<uint8_t>(i)));
  ASSERT_TRUE(wait_until([&] { return b.heard(2, msg::Attitude::kId) >= 200; }));
  b.send(system_time(255, 190, 1));
  ASSERT_TRUE(wait_until([&] { return a.heard(255, 2) == 1; })) << a.heard(255, 2) << " " << cluster.log(0);
  EXPECT_EQ(a.heard(2, msg::Attitude::kId) + a.heard(2, msg::Heartbeat::kId), 0u) << "nothing of vehicle 2";
  // What arrived on A's NATS connection: the ground station's frames only.
  const std::string links = http_request(http, "GET", "/api/v1/links").body;
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(links, m, std::regex(R"("endpoint": "fabric",\s*"kind": "nats",[^}]*"rx_frames": (\d+))")))
      << links;
  const size_t rx = std::stoul(m[1]);
  EXPECT_GE(rx, 2u);
  EXPECT_LT(rx, 100u) << "vehicle 2's 200 frames never came: " << links;
}

// NATS hands a connection a message once per subscription it matches. B asks for every
// broadcast and, again, for every heartbeat, and for every targeted frame besides those for its
// own systems: each frame still reaches its ground station once.
TEST_F(Fabric, OverlappingSubscriptionsRouteEachFrameOnce) {
  NatsCluster cluster;
  ASSERT_TRUE(cluster.ready()) << cluster.log(0);
  Site a(scratch_, "a", "Url = " + cluster.url(0) + "\n");
  Site b(scratch_, "b", "Url = " + cluster.url(1) + "\nSubscribe = from.>, from.*.*.HEARTBEAT, to.>\n");
  ASSERT_TRUE(all_heard({{&a, 1}, {&b, 255}}, {{&b, 1}, {&a, 255}})) << b.router->err();
  // B's interest in system 255 (to.255.>) is its own subscription too; it is on the cluster
  // once an acknowledgement for the ground station gets through.
  msg::CommandAck ack;
  ack.target_system = 255;
  ack.target_component = 190;
  uint8_t seq = 0;
  ASSERT_TRUE(wait_until([&] {
    a.send(frame_of(ack, 1, 1, seq++));
    return b.heard(1, msg::CommandAck::kId) > 0;
  })) << b.router->err();
  // A marker, then a clean slate: whatever was sent before it has arrived once it has.
  a.send(system_time(1, 1, 1));
  ASSERT_TRUE(wait_until([&] { return b.heard(1, 2) >= 1; })) << b.trace();
  b.peer.clear();
  constexpr uint32_t kEach = 30;
  for (uint32_t i = 0; i < kEach; ++i) {
    a.send(heartbeat(1, 1));
    a.send(attitude(1, 1, i, static_cast<uint8_t>(i)));
    a.send(frame_of(ack, 1, 1, static_cast<uint8_t>(i)));
  }
  a.send(system_time(1, 1, 99));  // a marker: NATS keeps one publisher's order
  ASSERT_TRUE(wait_until([&] { return b.heard(1, 2) >= 1; })) << b.trace() << b.router->err();
  EXPECT_EQ(b.heard(1, 2), 1u) << b.trace();
  EXPECT_EQ(b.heard(1, msg::Heartbeat::kId), kEach) << "matched from.> and from.*.*.HEARTBEAT: " << b.trace();
  EXPECT_EQ(b.heard(1, msg::Attitude::kId), kEach) << b.trace();
  EXPECT_EQ(b.heard(1, msg::CommandAck::kId), kEach) << "matched to.> and to.255.>: " << b.trace();
}

// The fabric link takes the filters of any endpoint: A publishes no ATTITUDE and takes nothing
// from system 3, while everything else crosses.
TEST_F(Fabric, FiltersActOnTheFabricLikeOnAnyLink) {
  NatsCluster cluster;
  ASSERT_TRUE(cluster.ready()) << cluster.log(0);
  Site a(scratch_, "a", "Url = " + cluster.url(0) + "\nBlockMsgIdOut = 30\nBlockSrcSysIn = 3\n");
  Site b(scratch_, "b", "Url = " + cluster.url(1) + "\n");  // the ground station, and vehicle 3
  ASSERT_TRUE(all_heard({{&a, 1}, {&b, 255}}, {{&b, 1}, {&a, 255}})) << a.router->err();
  for (uint32_t i = 0; i < 20; ++i) {
    a.send(attitude(1, 1, i, static_cast<uint8_t>(i)));
    b.send(heartbeat(3, 1));
  }
  a.send(system_time(1, 1, 99));  // markers: NATS keeps one publisher's order
  b.send(system_time(255, 190, 99));
  ASSERT_TRUE(wait_until([&] { return b.heard(1, 2) == 1 && a.heard(255, 2) == 1; })) << b.trace() << a.trace();
  EXPECT_EQ(b.heard(1, msg::Attitude::kId), 0u) << "ATTITUDE never left A: " << b.trace();
  EXPECT_EQ(a.heard(3, msg::Heartbeat::kId), 0u) << "nothing of system 3 came in: " << a.trace();
  EXPECT_GT(b.heard(1, msg::Heartbeat::kId), 0u);
}
