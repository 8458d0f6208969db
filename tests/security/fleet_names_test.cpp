// Fleet names are unique (docs/SECURITY.md), against a real nats-server cluster on loopback: a
// publisher sending in a vehicle name another router holds is refused by the ground, which
// names both; a second mavswitchd configured with a held name yields, so a command for the
// vehicle reaches one autopilot.
#include <nats/nats.h>

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
