// A fleet whose vehicles all say "system 1" (real nats-server on loopback): each vehicle's router
// names its vehicle (Vehicle = vN), a ground router takes them under ids of its own
// (Vehicles = v1:11, ...) and renumbers their frames both ways; patterns number the vehicles they
// find; signed vehicles are signed again or refused.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <deque>
#include <filesystem>
#include <regex>
#include <set>

#include "e2e/http_client.hpp"
#include "e2e/nats_site.hpp"
#include "mavswitch/msg/command_ack.hpp"
#include "mavswitch/msg/command_long.hpp"
#include "mavswitch/msg/global_position_int.hpp"
#include "protocol/signing.hpp"

using namespace mavswitch;
using namespace mavswitch::test;

namespace {

// The frames of message `msgid` a site's peer got, as views.
std::vector<protocol::FrameView> frames_of(Site& site, uint32_t msgid) {
  std::vector<protocol::FrameView> got;
  for (const auto& f : site.peer.received().frames) {
    if (view_of(f).msgid() == msgid) got.push_back(view_of(f));
  }
  return got;
}

// Each vehicle sends its heartbeat and an ATTITUDE whose time_boot_ms names it (vehicle k: k*1000 + i).
void telemetry(const std::vector<Site*>& vehicles, uint32_t i) {
  for (size_t k = 0; k < vehicles.size(); ++k) {
    vehicles[k]->send(heartbeat(1, 1, static_cast<uint8_t>(i)));
    vehicles[k]->send(attitude(1, 1, static_cast<uint32_t>((k + 1) * 1000 + i), static_cast<uint8_t>(i)));
  }
}

// A [NatsEndpoint]'s keys for a vehicle's router: its cluster node, its name, and more keys.
std::string vehicle_keys(const std::string& url, const std::string& name, const std::string& more = "") {
  return "Url = " + url + "\nVehicle = " + name + "\n" + more;
}

}  // namespace

TEST_F(Fabric, ThreeVehiclesThatAreAllSystemOneAreThreeSystemsOnTheGround) {
  NatsCluster cluster;
  ASSERT_TRUE(cluster.ready()) << cluster.log(0);
  const uint16_t http = free_tcp_port(), http_v1 = free_tcp_port();
  Site v1(scratch_, "v1", vehicle_keys(cluster.url(0), "v1"), "127.0.0.1:" + std::to_string(http_v1));
  Site v2(scratch_, "v2", vehicle_keys(cluster.url(1), "v2"));
  Site v3(scratch_, "v3", vehicle_keys(cluster.url(2), "v3"));
  Site ground(scratch_, "ground", "Url = " + cluster.url(0) + "\nVehicles = v1:11, v2:12, v3:13\n",
              "127.0.0.1:" + std::to_string(http));
  const std::vector<Site*> vehicles{&v1, &v2, &v3};
  uint32_t i = 0;
  // Until the ground station hears the three, and each vehicle the ground station.
  ASSERT_TRUE(wait_until(
      [&] {
        telemetry(vehicles, i++ % 200);
        ground.send(heartbeat(255, 190));
        return ground.heard(11, msg::Heartbeat::kId) > 0 && ground.heard(12, msg::Heartbeat::kId) > 0 &&
               ground.heard(13, msg::Heartbeat::kId) > 0 && v1.heard(255, msg::Heartbeat::kId) > 0 &&
               v2.heard(255, msg::Heartbeat::kId) > 0 && v3.heard(255, msg::Heartbeat::kId) > 0;
      },
      15000ms))
      << ground.trace() << ground.router->err();
  EXPECT_EQ(ground.heard(1, msg::Heartbeat::kId), 0u) << "no system 1 on the ground: " << ground.trace();

  // A marker from each (NATS keeps one publisher's order: what came before it has arrived), a
  // clean slate, then 100 rounds of telemetry: each id carries its own vehicle's, once each.
  for (Site* v : vehicles) v->send(system_time(1, 1, 7));
  ASSERT_TRUE(wait_until([&] { return ground.heard(11, 2) && ground.heard(12, 2) && ground.heard(13, 2); }));
  ground.peer.clear();
  for (Site* v : vehicles) v->peer.clear();
  for (uint32_t n = 0; n < 100; ++n) telemetry(vehicles, n);
  ASSERT_TRUE(wait_until([&] {
    return ground.attitude_numbers(11, 1).size() >= 100 && ground.attitude_numbers(12, 1).size() >= 100 &&
           ground.attitude_numbers(13, 1).size() >= 100;
  })) << ground.trace();
  for (uint8_t k = 1; k <= 3; ++k) {
    const auto numbers = ground.attitude_numbers(uint8_t(10 + k), 1);
    EXPECT_EQ(numbers.size(), 100u) << "system " << 10 + k << ": nothing twice";
    for (uint32_t n = 0; n < numbers.size(); ++n)
      ASSERT_EQ(numbers[n], k * 1000 + n) << "system " << 10 + k << " carries vehicle v" << int(k) << "'s ATTITUDE";
  }
  // The peer parses with CRC checks: every frame it kept was whole. And none kept the old id.
  EXPECT_EQ(ground.heard(1, msg::Attitude::kId), 0u);
  for (Site* v : vehicles)
    EXPECT_EQ(v->heard(1, msg::Attitude::kId), 0u) << "no vehicle hears another's telemetry: " << v->trace();

  // A command to 12/1 reaches v2 alone, as a command to 1/1; its answer comes back from 12.
  ground.send(command_long(255, 190, 12, 1));
  ASSERT_TRUE(wait_until([&] { return !frames_of(v2, msg::CommandLong::kId).empty(); })) << v2.trace();
  const auto command = msg::CommandLong::decode(frames_of(v2, msg::CommandLong::kId)[0].payload());
  EXPECT_EQ(command.target_system, 1);
  EXPECT_EQ(command.target_component, 1);
  EXPECT_EQ(command.command, 400);
  EXPECT_EQ(frames_of(v2, msg::CommandLong::kId)[0].sysid(), 255);
  msg::CommandAck ack;
  ack.command = 400;
  ack.target_system = 255;
  ack.target_component = 190;
  ASSERT_TRUE(wait_until([&] {
    v2.send(frame_of(ack, 1, 1));
    return !frames_of(ground, msg::CommandAck::kId).empty();
  })) << ground.trace();
  EXPECT_EQ(frames_of(ground, msg::CommandAck::kId)[0].sysid(), 12);
  v1.send(system_time(1, 1, 5));  // a marker: what v1 and v3 would have got is there by now
  ASSERT_TRUE(wait_until([&] { return ground.heard(11, 2) > 0; }));
  EXPECT_TRUE(frames_of(v1, msg::CommandLong::kId).empty()) << v1.trace();
  EXPECT_TRUE(frames_of(v3, msg::CommandLong::kId).empty()) << v3.trace();

  // The API says which vehicle is which.
  const std::string endpoints = http_request(http, "GET", "/api/v1/endpoints").body;
  EXPECT_NE(endpoints.find("vehicles v1=11 v2=12 v3=13"), std::string::npos) << endpoints;
  EXPECT_NE(ground.router->err().find("vehicle v2 is system 12 here"), std::string::npos) << ground.router->err();
  // And names them wherever it shows a system: its systems, /metrics, the tool's status.
  const std::string systems = http_request(http, "GET", "/api/v1/systems").body;
  for (const auto& [system, name] : {std::pair{11, "v1"}, {12, "v2"}, {13, "v3"}}) {
    EXPECT_TRUE(
        std::regex_search(systems, std::regex(fmt::format(R"("system": {},[^}}]*"vehicle": "{}")", system, name))))
        << name << "\n"
        << systems;
  }
  const std::string metrics = http_request(http, "GET", "/metrics").body;
  EXPECT_NE(metrics.find(R"(mavswitch_vehicle_armed{system="12",vehicle="v2"})"), std::string::npos) << metrics;
  const std::string own = http_request(http_v1, "GET", "/api/v1/systems").body;
  EXPECT_TRUE(std::regex_search(own, std::regex(R"("system": 1,[^}]*"vehicle": "v1")")))
      << "its own router names it too: " << own;
  std::string out;
  ASSERT_EQ(run_command(tool_path() + " status --interval 0.2 --url http://127.0.0.1:" + std::to_string(http) + " 2>&1",
                        &out),
            0)
      << out;
  EXPECT_TRUE(std::regex_search(out, std::regex(R"(\nv3 +13 +1 )"))) << out;
}

// A pattern numbers the vehicles it finds with the first free ids; a vehicle it does not match
// is not heard, and counted. Past the ids left, one error line, however many more come.
TEST_F(Fabric, APatternNumbersTheVehiclesItFindsUntilNoIdIsLeft) {
  NatsCluster cluster(1);
  ASSERT_TRUE(cluster.ready()) << cluster.log(0);
  std::deque<Site> fleet;  // two boats the pattern takes, a car it does not
  for (const char* name : {"boat-a", "boat-b", "car-1"})
    fleet.emplace_back(scratch_, name, vehicle_keys(cluster.url(0), name));
  Site &a = fleet[0], &b = fleet[1], &car = fleet[2];
  const uint16_t http = free_tcp_port();
  Site ground(scratch_, "ground", "Url = " + cluster.url(0) + "\nVehicles = v1:1, boat-*\n",
              "127.0.0.1:" + std::to_string(http));
  ASSERT_TRUE(wait_until(
      [&] {
        for (Site* s : {&a, &b, &car}) s->send(heartbeat(1, 1));
        ground.send(heartbeat(255, 190));
        return ground.heard(2, msg::Heartbeat::kId) > 0 && ground.heard(3, msg::Heartbeat::kId) > 0 &&
               fabric_count(http, "unmapped") > 0;
      },
      15000ms))
      << ground.trace() << ground.router->err();
  const std::string err = ground.router->err();
  // Ids 2 and 3: 1 is v1's, given in the list; which boat came first decides the order.
  const bool a_first = err.find("vehicle boat-a is system 2 here") != std::string::npos;
  EXPECT_NE(err.find(a_first ? "vehicle boat-b is system 3 here" : "vehicle boat-a is system 3 here"),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find("car-1"), std::string::npos) << "not taken, not numbered: " << err;
  EXPECT_EQ(ground.heard(1, msg::Heartbeat::kId), 0u) << ground.trace();

  // Ids run out: 254 names listed with ids, so one id (200) is left for the pattern.
  std::string listed;
  for (int id = 1; id <= 255; ++id) {
    if (id != 200) listed += "x" + std::to_string(id) + ":" + std::to_string(id) + ", ";
  }
  const uint16_t full_http = free_tcp_port();
  Site full(scratch_, "full", "Url = " + cluster.url(0) + "\nVehicles = " + listed + "boat-*\n",
            "127.0.0.1:" + std::to_string(full_http));
  ASSERT_TRUE(wait_until(
      [&] {
        for (Site* s : {&a, &b, &car}) s->send(heartbeat(1, 1));
        const std::string e = full.router->err();
        return e.find("no system id is left") != std::string::npos && e.find("is system 200 here") != std::string::npos;
      },
      15000ms))
      << full.router->err();
  // More heartbeats of the boat that got no id, counted as they come: no second line.
  const uint64_t unmapped = fabric_count(full_http, "unmapped");
  for (int n = 0; n < 20; ++n) {
    for (Site* s : {&a, &b}) s->send(heartbeat(1, 1));
  }
  EXPECT_TRUE(wait_until([&] { return fabric_count(full_http, "unmapped") >= unmapped + 20; }))
      << fabric_count(full_http, "unmapped") - unmapped;
  const std::string e = full.router->err();
  EXPECT_EQ(e.find("no system id is left"), e.rfind("no system id is left")) << "one error line: " << e;
}

// A vehicle whose router signs what it puts on the fabric: a ground router with the fleet's key
// renumbers its frames and signs them again (valid with that key, both ways); one without a key
// cannot, and says so rather than pass them on.
TEST_F(Fabric, ASignedVehicleIsSignedAgainOrRefused) {
  NatsCluster cluster(1);
  ASSERT_TRUE(cluster.ready()) << cluster.log(0);
  const std::string key = scratch_.write("fleet.key", std::string(64, 'a')).string();
  std::filesystem::permissions(key, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
                               std::filesystem::perm_options::replace);
  protocol::SigningKey fleet_key;
  fleet_key.fill(0xaa);
  const uint16_t http = free_tcp_port();
  Site v1(scratch_, "v1", vehicle_keys(cluster.url(0), "v1", "SigningKeyFile = " + key + "\n"));
  Site keyless(scratch_, "keyless", "Url = " + cluster.url(0) + "\nVehicles = v1:11\n",
               "127.0.0.1:" + std::to_string(http));
  Site keyed(scratch_, "keyed", "Url = " + cluster.url(0) + "\nVehicles = v1:11\nSigningKeyFile = " + key + "\n");
  const std::string other_key = scratch_.write("other.key", std::string(64, 'b')).string();
  std::filesystem::permissions(other_key, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
                               std::filesystem::perm_options::replace);
  Site other(scratch_, "other", "Url = " + cluster.url(0) + "\nVehicles = v1:11\nSigningKeyFile = " + other_key + "\n");
  ASSERT_TRUE(wait_until(
      [&] {
        v1.send(heartbeat(1, 1));
        keyed.send(heartbeat(255, 190));
        keyless.send(heartbeat(255, 190));
        return keyed.heard(11, msg::Heartbeat::kId) > 0 && v1.heard(255, msg::Heartbeat::kId) > 0 &&
               fabric_count(http, "unmapped") > 0;
      },
      15000ms))
      << keyed.trace() << keyed.router->err() << v1.router->err();
  const auto heartbeats = frames_of(keyed, msg::Heartbeat::kId);
  for (const auto& f : heartbeats) {
    if (f.sysid() != 11) continue;
    EXPECT_TRUE(f.is_signed());
    EXPECT_TRUE(protocol::signature_valid(fleet_key, f)) << "renumbered, then signed again with the fleet's key";
  }
  EXPECT_EQ(keyless.heard(11, msg::Heartbeat::kId), 0u) << keyless.trace();
  EXPECT_NE(keyless.router->err().find("vehicle v1 signs its frames and this [NatsEndpoint] has no SigningKeyFile"),
            std::string::npos)
      << keyless.router->err();
  // The vehicle goes on sending: `other` may have joined the fabric after its last heartbeat above.
  EXPECT_TRUE(wait_until(
      [&] {
        v1.send(heartbeat(1, 1));
        return other.router->err().find("vehicle v1 signs with another key than this [NatsEndpoint]'s") !=
               std::string::npos;
      },
      10000ms))
      << other.router->err();
  EXPECT_EQ(other.heard(11, msg::Heartbeat::kId), 0u) << "never vouched for: " << other.trace();
  // A command to 11/1 reaches v1 as one to 1/1, signed with the key (v1's fabric link checks).
  ASSERT_TRUE(wait_until([&] {
    keyed.send(command_long(255, 190, 11, 1));
    return !frames_of(v1, msg::CommandLong::kId).empty();
  })) << v1.trace()
      << v1.router->err();
  const protocol::FrameView command = frames_of(v1, msg::CommandLong::kId)[0];
  EXPECT_EQ(msg::CommandLong::decode(command.payload()).target_system, 1);
  EXPECT_TRUE(protocol::signature_valid(fleet_key, command));
}

// The fleet state keeps each named vehicle apart: two vehicles both at system 1 are two rows of
// `mavswitch fleet`, by name.
TEST_F(Fabric, TheFleetListsTwoVehiclesAtSystemOneByName) {
  NatsCluster cluster(1, {}, (scratch_.path() / "jetstream").string());
  ASSERT_TRUE(cluster.ready()) << cluster.log(0);
  Site v1(scratch_, "v1", vehicle_keys(cluster.url(0), "v1", "FleetState = true\n"));
  Site v2(scratch_, "v2", vehicle_keys(cluster.url(0), "v2"));
  ASSERT_TRUE(wait_until([&] { return v1.router->err().find("fleet state kept") != std::string::npos; }, 20000ms))
      << v1.router->err();
  msg::GlobalPositionInt position;
  position.lat = 471000000;
  const std::string tool = tool_path() + " fleet --json --nats " + cluster.url(0);
  std::string out;
  ASSERT_TRUE(wait_until(
      [&] {
        v1.send(heartbeat(1, 1));
        v2.send(heartbeat(1, 1));
        v1.send(frame_of(position, 1, 1));
        return run_command(tool + " 2>&1", &out) == 0 && out.find("\"vehicle\": \"v1\"") != std::string::npos &&
               out.find("\"vehicle\": \"v2\"") != std::string::npos;
      },
      10000ms))
      << out << v1.router->err();
  EXPECT_NE(out.find("\"lat\": 47.1"), std::string::npos) << "v1's position: " << out;
  ASSERT_EQ(run_command(tool_path() + " fleet --nats " + cluster.url(0) + " 2>&1", &out), 0) << out;
  EXPECT_NE(out.find("VEHICLE"), std::string::npos) << out;
  EXPECT_NE(out.find("v1 "), std::string::npos) << out;
  EXPECT_NE(out.find("v2 "), std::string::npos) << out;
}
