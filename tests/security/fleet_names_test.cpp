// Fleet names are unique (docs/SECURITY.md), against a real nats-server cluster on loopback: a
// publisher sending in a vehicle name another router holds is refused by the ground, which
// names both; a second mavswitchd configured with a held name yields, so a command for the
// vehicle reaches one autopilot.
#include <nats/nats.h>

#include <algorithm>
#include <csignal>
#include <thread>

#include "e2e/nats_site.hpp"
#include "mavswitch/msg/command_long.hpp"

using namespace mavswitch;
using namespace mavswitch::test;

namespace {

// A metric's whole line in /metrics that starts with `series` ("" when none).
std::string metric_line(uint16_t http, const std::string& series) {
  const std::string text = http_request(http, "GET", "/metrics").body;
  const auto at = text.find("\n" + series);
  return at == std::string::npos ? "" : text.substr(at + 1, text.find('\n', at + 1) - at - 1);
}

// A NATS client that publishes frames as a vehicle's router would, under an origin of its own,
// and never yields: a router of another make, or one that lies.
class RawPublisher {
 public:
  explicit RawPublisher(const std::string& url) { natsConnection_ConnectTo(&connection_, url.c_str()); }
  ~RawPublisher() { natsConnection_Destroy(connection_); }
  bool connected() const { return connection_ != nullptr; }
  void publish(const std::string& subject, const Bytes& frame) {
    natsConnection_PublishRequest(connection_, subject.c_str(), "mavlink.origin.impostor", frame.data(),
                                  static_cast<int>(frame.size()));
    natsConnection_FlushTimeout(connection_, 1000);
  }

 private:
  natsConnection* connection_ = nullptr;
};

}  // namespace

TEST_F(Fabric, a_publisher_sending_as_a_held_vehicle_name_is_refused_on_the_ground_and_named) {
  NatsCluster cluster;
  ASSERT_TRUE(cluster.ready()) << cluster.log(0);
  const uint16_t http = free_tcp_port();
  Site boat(scratch_, "boat", "Url = " + cluster.url(0) + "\nVehicle = boat-1\n");
  Site ground(scratch_, "ground", "Url = " + cluster.url(2) + "\nVehicles = boat-1:11\n",
              "127.0.0.1:" + std::to_string(http));
  RawPublisher impostor(cluster.url(1));
  ASSERT_TRUE(impostor.connected());
  uint32_t i = 0;
  ASSERT_TRUE(wait_until(
      [&] {
        boat.send(heartbeat(1, 1, static_cast<uint8_t>(i)));
        boat.send(attitude(1, 1, 1000 + i++ % 1000));
        ground.send(heartbeat(255, 190));
        return ground.heard(11, msg::Heartbeat::kId) > 0 && boat.heard(255, msg::Heartbeat::kId) > 0;
      },
      15000ms))
      << ground.router->err();
  ground.peer.clear();
  ASSERT_TRUE(wait_until(
      [&] {
        boat.send(heartbeat(1, 1));
        boat.send(attitude(1, 1, 2000));
        impostor.publish("mavlink.boat-1.from.1.1.HEARTBEAT", heartbeat(1, 1));
        impostor.publish("mavlink.boat-1.from.1.1.ATTITUDE", attitude(1, 1, 9000));
        return count_of(ground.router->err(), "holds the name") > 0 && !ground.attitude_numbers(11, 1).empty();
      },
      15000ms))
      << ground.router->err();
  for (const uint32_t n : ground.attitude_numbers(11, 1)) EXPECT_LT(n, 9000u) << "an impostor's frame on the ground";
  const std::string line = metric_line(http, "mavswitch_fleet_name_conflict_frames_total{vehicle=\"boat-1\"");
  EXPECT_NE(line.find("refused=\"mavlink.origin.impostor\""), std::string::npos) << line;
  EXPECT_NE(line.find("holder=\"mavlink.origin."), std::string::npos) << line;
  EXPECT_EQ(count_of(ground.router->err(), "holds the name"), 1u) << "said once: " << ground.router->err();
}

TEST_F(Fabric, a_second_router_configured_with_a_held_name_yields_and_takes_no_command) {
  NatsCluster cluster;
  ASSERT_TRUE(cluster.ready()) << cluster.log(0);
  Site boat(scratch_, "boat", "Url = " + cluster.url(0) + "\nVehicle = boat-1\n");
  Site ground(scratch_, "ground", "Url = " + cluster.url(2) + "\nVehicles = boat-1:11\n");
  ASSERT_TRUE(all_heard({{&boat, 1}, {&ground, 255}}, {{&ground, 11}, {&boat, 255}})) << ground.router->err();
  Site impostor(scratch_, "impostor", "Url = " + cluster.url(1) + "\nVehicle = boat-1\n");
  ASSERT_TRUE(wait_until(
      [&] {
        boat.send(heartbeat(1, 1));
        impostor.send(heartbeat(1, 1));
        return count_of(impostor.router->err(), "was there first") > 0;
      },
      15000ms))
      << "impostor:\n"
      << impostor.router->err() << "\nboat:\n"
      << boat.router->err();
  ASSERT_TRUE(wait_until([&] {
    ground.send(command_long(255, 190, 11, 1));
    boat.send(heartbeat(1, 1));
    impostor.send(heartbeat(1, 1));
    return boat.heard(255, msg::CommandLong::kId) > 0;
  }));
  EXPECT_EQ(impostor.heard(255, msg::CommandLong::kId), 0u) << "the later router took no command for the vehicle";
}

// A vehicle streams 1,000 frames a second through node 0, which freezes (SIGSTOP) for seconds
// and then resumes, delivering what it held late. At the ground router every frame arrived or
// was counted (lost, or dropped as stale), and the ground station got them in order.
TEST_F(Fabric, frames_lost_around_a_frozen_node_are_counted_and_none_arrive_out_of_order) {
  NatsCluster cluster;
  ASSERT_TRUE(cluster.ready()) << cluster.log(0);
  const uint16_t http = free_tcp_port();
  Site a(scratch_, "a", "Url = " + cluster.url(0) + ", " + cluster.url(1) + "\n");
  Site b(scratch_, "b", "Url = " + cluster.url(2) + "\n", "127.0.0.1:" + std::to_string(http));
  ASSERT_TRUE(all_heard({{&a, 1}, {&b, 255}}, {{&b, 1}, {&a, 255}})) << a.router->err();
  b.peer.clear();
  const uint64_t lost_before = fabric_count(http, "lost_on_fabric"), stale_before = fabric_count(http, "stale");
  uint32_t sent = 0, after = 0;
  bool moved = false;
  const auto start = std::chrono::steady_clock::now();
  for (; sent < 30000 && after < 1000 && std::chrono::steady_clock::now() - start < 25s; ++sent) {
    a.send(attitude(1, 60, sent, static_cast<uint8_t>(sent)));
    if (sent == 500) cluster.signal(0, SIGSTOP);
    if (sent > 500 && !moved && sent % 20 == 0) {
      moved = a.router->err().find("reconnected to " + cluster.url(1)) != std::string::npos;
      if (moved) cluster.signal(0, SIGCONT);
    }
    after += moved;
    std::this_thread::sleep_until(start + (sent + 1) * 1ms);
  }
  ASSERT_TRUE(moved) << a.router->err();
  std::vector<uint32_t> got;
  ASSERT_TRUE(wait_until([&] {
    got = b.attitude_numbers(1, 60);
    return !got.empty() && got.back() == sent - 1;
  })) << got.size();
  // What node 0 held is delivered once it runs again, to node 2 at once: its late frames are
  // dropped as they come (after newer ones), and counted.
  ASSERT_TRUE(wait_until(
      [&] {
        return fabric_count(http, "lost_on_fabric") - lost_before + got.size() + fabric_count(http, "stale") -
                   stale_before >=
               sent - got.front();
      },
      5000ms));
  const uint64_t lost = fabric_count(http, "lost_on_fabric") - lost_before;
  const uint64_t stale = fabric_count(http, "stale") - stale_before;
  std::cout << "[ figures  ] " << sent << " sent, " << got.size() << " arrived in order, " << lost << " counted lost, "
            << stale << " late ones dropped and counted\n";
  EXPECT_TRUE(std::is_sorted(got.begin(), got.end())) << "out of order at the ground station";
  EXPECT_EQ(std::adjacent_find(got.begin(), got.end()), got.end()) << "a frame twice";
  EXPECT_EQ(got.size() + lost, sent - got.front()) << "every frame arrived or was counted lost";
}
