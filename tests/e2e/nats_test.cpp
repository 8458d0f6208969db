// The fleet fabric end to end: mavswitchd routers joined through a real three-node nats-server
// cluster on loopback (Debian's nats-server). Telemetry, commands and acknowledgements cross
// it, signed frames byte for byte; targeted traffic stays where its target lives; nothing arrives twice; a node that
// dies moves its routers to another, and what it lost is counted; a hung or lost server fills only the fabric's bounded
// buffers; JetStream keeps the fleet's state for late consumers. Who may sign in is in nats_access_test.cpp, who
// receives what in nats_interest_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <regex>
#include <set>

#include "e2e/fake_autopilot.hpp"
#include "e2e/http_client.hpp"
#include "e2e/nats_site.hpp"
#include "mavswitch/msg/attitude.hpp"
#include "mavswitch/msg/command_ack.hpp"
#include "mavswitch/msg/command_long.hpp"
#include "mavswitch/msg/encapsulated_data.hpp"
#include "mavswitch/msg/global_position_int.hpp"
#include "mavswitch/msg/sys_status.hpp"
#include "protocol/signing.hpp"

using namespace mavswitch;
using namespace mavswitch::test;

namespace {

msg::CommandAck ack_of(uint8_t target_sys, uint8_t target_comp, uint16_t command) {
  msg::CommandAck a;
  a.command = command;
  a.target_system = target_sys;
  a.target_component = target_comp;
  return a;
}

}  // namespace

TEST_F(Fabric, CommandsAndTelemetryCrossTheClusterAndStayWhereTheyBelong) {
  NatsCluster cluster;
  ASSERT_TRUE(cluster.ready()) << cluster.log(0);
  Site a(scratch_, "a", "Url = " + cluster.url(0) + "\n");  // vehicle 1
  Site b(scratch_, "b", "Url = " + cluster.url(1) + "\n");  // the ground station, 255/190
  Site c(scratch_, "c", "Url = " + cluster.url(2) + "\n");  // vehicle 2
  ASSERT_TRUE(all_heard({{&a, 1}, {&b, 255}, {&c, 2}}, {{&b, 1}, {&b, 2}, {&a, 255}, {&c, 255}}))
      << a.router->err() << b.router->err();
  EXPECT_NE(a.router->err().find("nats fabric: connected to " + cluster.url(0)), std::string::npos) << a.router->err();

  // A command for vehicle 1 reaches it; its acknowledgement reaches the ground station. Sent
  // again until they do, as a ground station does: a router asks for what targets its systems
  // when it first hears them, and the cluster takes a moment to pass that interest on.
  uint8_t commands = 0, acks = 0;
  ASSERT_TRUE(wait_until([&] {
    b.send(command_long(255, 190, 1, 1, commands++));
    return a.heard(255, msg::CommandLong::kId) > 0;
  })) << a.router->err();
  ASSERT_TRUE(wait_until([&] {
    a.send(frame_of(ack_of(255, 190, 400), 1, 1, acks++));
    return b.heard(1, msg::CommandAck::kId) > 0;
  })) << b.router->err();

  // Telemetry: 50 frames from vehicle 1, each heard once by the ground station and by C.
  for (uint32_t i = 0; i < 50; ++i) a.send(attitude(1, 1, i, static_cast<uint8_t>(i)));
  ASSERT_TRUE(wait_until([&] { return b.heard(1, msg::Attitude::kId) >= 50 && c.heard(1, msg::Attitude::kId) >= 50; }));
  // A signed frame crosses byte for byte: its signature still checks at the other end.
  const protocol::SigningKey key = {0x5a, 0x17};
  const Bytes plain = frame_of(msg::GlobalPositionInt{}, 1, 1, 7);
  Bytes signed_frame(protocol::kMaxFrameLen);
  signed_frame.resize(protocol::sign_frame(view_of(plain), key, 3, protocol::signing_timestamp_now(), signed_frame));
  a.send(signed_frame);
  // A marker after everything else: NATS keeps one publisher's order, so once each site has it,
  // anything earlier that was going to reach it has.
  a.send(system_time(1, 1, 99));
  b.send(system_time(255, 190, 99));
  ASSERT_TRUE(wait_until([&] { return b.heard(1, 2) == 1 && c.heard(1, 2) == 1 && c.heard(255, 2) == 1; }))
      << b.heard(1, 2) << " " << c.heard(1, 2) << " " << c.heard(255, 2) << "\nB: " << b.trace() << "\nC: " << c.trace()
      << "\n"
      << b.router->err() << c.router->err();
  EXPECT_EQ(b.heard(1, msg::Attitude::kId), 50u) << "no frame twice: " << b.router->err();
  EXPECT_EQ(c.heard(1, msg::Attitude::kId), 50u) << "no frame twice: " << c.router->err();
  const auto& got = b.peer.received().frames;
  EXPECT_EQ(std::count(got.begin(), got.end(), signed_frame), 1) << "the signed frame, whole and once: " << b.trace();
  for (const Bytes& f : got) {
    if (view_of(f).msgid() == msg::GlobalPositionInt::kId) {
      EXPECT_TRUE(protocol::signature_valid(key, view_of(f)));
    }
  }
  EXPECT_LE(a.heard(255, msg::CommandLong::kId), commands) << "none twice: " << a.router->err();
  EXPECT_LE(b.heard(1, msg::CommandAck::kId), acks) << "none twice";
  EXPECT_EQ(c.heard(255, msg::CommandLong::kId), 0u) << "the command for vehicle 1 never reached C";
  EXPECT_EQ(c.heard(1, msg::CommandAck::kId), 0u) << "nor the acknowledgement for the ground station";
  for (Site* s : {&a, &b, &c}) EXPECT_TRUE(s->router->running());
}

TEST_F(Fabric, ANodeThatDiesMovesItsRoutersToAnother) {
  NatsCluster cluster;
  ASSERT_TRUE(cluster.ready()) << cluster.log(0);
  const uint16_t http = free_tcp_port();
  Site a(scratch_, "a", "Url = " + cluster.url(0) + ", " + cluster.url(1) + "\n", "127.0.0.1:" + std::to_string(http));
  Site b(scratch_, "b", "Url = " + cluster.url(2) + "\n");
  ASSERT_TRUE(all_heard({{&a, 1}, {&b, 255}}, {{&b, 1}, {&a, 255}})) << a.router->err();
  cluster.kill(0);
  ASSERT_TRUE(wait_until([&] { return a.router->err().find("reconnected to " + cluster.url(1)) != std::string::npos; },
                         10000ms))
      << a.router->err();
  EXPECT_NE(a.router->err().find("nats fabric: disconnected"), std::string::npos) << a.router->err();
  // Traffic resumes both ways.
  b.peer.clear();
  a.peer.clear();
  ASSERT_TRUE(all_heard({{&a, 1}, {&b, 255}}, {{&b, 1}, {&a, 255}})) << a.router->err();
  // A command too, once the cluster has passed on the vehicle's interest from its new node.
  uint8_t sent = 0;
  EXPECT_TRUE(wait_until([&] {
    b.send(command_long(255, 190, 1, 1, sent++));
    return a.heard(255, msg::CommandLong::kId) > 0;
  }));
  EXPECT_LE(a.heard(255, msg::CommandLong::kId), sent) << "none twice";
  const std::string stats = http_request(http, "GET", "/api/v1/stats").body;
  EXPECT_NE(stats.find("connected to " + cluster.url(1) + ", 1 reconnects"), std::string::npos) << stats;
  EXPECT_TRUE(a.router->running());
}

// A node that dies mid-stream: every frame of a vehicle's stream either reaches the ground
// station or is counted lost by the ground station's router, from the gaps in the vehicle
// router's own numbers its fabric link saw (or not sent by the vehicle's router, and counted
// there). Nothing vanishes uncounted, nothing arrives twice.
TEST_F(Fabric, FramesLostWhenANodeDiesAreCounted) {
  NatsCluster cluster;
  ASSERT_TRUE(cluster.ready()) << cluster.log(0);
  const uint16_t http = free_tcp_port(), http_a = free_tcp_port();
  Site a(scratch_, "a", "Url = " + cluster.url(0) + ", " + cluster.url(1) + "\n",
         "127.0.0.1:" + std::to_string(http_a));
  Site b(scratch_, "b", "Url = " + cluster.url(2) + "\n", "127.0.0.1:" + std::to_string(http));
  ASSERT_TRUE(all_heard({{&a, 1}, {&b, 255}}, {{&b, 1}, {&a, 255}})) << a.router->err();
  // Vehicle 1's component 50 sends a frame a millisecond (the sleep paces the stream; it waits
  // for nothing), numbered by time_boot_ms; node 1 dies 300 frames in; 500 more follow the
  // router's move to node 2. What a's fabric could not send before (HEARTBEATs before it was
  // connected) is not the stream's.
  const uint64_t unsent_before = fabric_count(http_a, "link_down") + fabric_count(http_a, "queue_full");
  uint32_t sent = 0, after = 0;
  bool moved = false;
  for (; sent < 20000 && after < 500; ++sent) {
    a.send(attitude(1, 50, sent, static_cast<uint8_t>(sent)));
    if (sent == 300) cluster.kill(0);
    if (sent > 300 && !moved && sent % 20 == 0) moved = a.router->err().find("reconnected to") != std::string::npos;
    after += moved;
    std::this_thread::sleep_for(1ms);
  }
  ASSERT_TRUE(moved) << a.router->err();
  // What reached the ground station, by number.
  std::vector<uint32_t> got;
  auto collect = [&] {
    got = b.attitude_numbers(1, 50);
    return !got.empty() && got.back() == sent - 1;
  };
  ASSERT_TRUE(wait_until(collect)) << got.size() << " frames, the last " << (got.empty() ? 0 : got.back());
  const std::set<uint32_t> distinct(got.begin(), got.end());
  EXPECT_EQ(distinct.size(), got.size()) << "none twice";
  // B's fabric link counted the gaps in a's numbers; a's counted what it could not send. With
  // what arrived, that is every frame sent from the first.
  const uint64_t lost = fabric_count(http, "lost_on_fabric");
  const uint64_t unsent = fabric_count(http_a, "link_down") + fabric_count(http_a, "queue_full") - unsent_before;
  EXPECT_EQ(distinct.size() + lost + unsent, sent - got.front())
      << lost << " counted lost, " << unsent << " not sent, " << distinct.size() << " arrived";
  EXPECT_EQ(fabric_count(http, "sequence_lost"), 0u) << "the fabric's loss is its own count, not MAVLink's";
  std::cout << "[ figures  ] " << sent << " frames sent, " << distinct.size() << " arrived, " << lost
            << " counted lost across the node change\n";
}

// A ground station asks for ATTITUDE at 10 Hz of a vehicle streaming it at 200 Hz: the vehicle's
// router thins what it publishes to the wish, so the ground's fabric link sees gaps in the
// vehicle's MAVLink numbers. None of that is loss on the fabric: both routers count 0 lost, and
// the thinning shows where it happened, as rate_thinned on the vehicle's router.
TEST_F(Fabric, StreamsThinnedByARateWishAreNotCountedLost) {
  NatsCluster cluster(1);
  ASSERT_TRUE(cluster.ready()) << cluster.log(0);
  const uint16_t http_a = free_tcp_port(), http_b = free_tcp_port();
  Site a(scratch_, "a", "Url = " + cluster.url(0) + "\n", "127.0.0.1:" + std::to_string(http_a));
  Site b(scratch_, "b", "Url = " + cluster.url(0) + "\n", "127.0.0.1:" + std::to_string(http_b));
  ASSERT_TRUE(all_heard({{&a, 1}, {&b, 255}}, {{&b, 1}, {&a, 255}})) << a.router->err();
  b.send(set_interval(255, 190, msg::Attitude::kId, 100000));
  uint8_t seq = 0;
  ASSERT_TRUE(wait_until(
      [&] {
        for (uint32_t k = 0; k < 20; ++k) a.send(attitude(1, 1, k, seq++));
        return fabric_count(http_a, "rate_thinned") > 0;
      },
      10000ms))
      << "the wish reached the vehicle's router";
  // Two seconds of 200 Hz: each frame at its own 5 ms from the start.
  const auto start = std::chrono::steady_clock::now();
  for (uint32_t sent = 0; sent < 400; ++sent) {
    a.send(attitude(1, 1, 1000 + sent, seq++));
    std::this_thread::sleep_until(start + (sent + 1) * 5ms);
  }
  ASSERT_TRUE(wait_until([&] {
    const auto got = b.attitude_numbers(1, 1);
    return !got.empty() && got.back() >= 1350;
  })) << b.trace();
  const size_t arrived = b.attitude_numbers(1, 1).size();
  std::cout << "[ figures  ] 400 ATTITUDE sent at 200 Hz, " << arrived << " reached the ground station, "
            << fabric_count(http_a, "rate_thinned") << " thinned by the vehicle's router\n";
  EXPECT_LT(arrived, 150u) << "thinned to about 10 Hz";
  EXPECT_EQ(fabric_count(http_b, "sequence_lost"), 0u);
  EXPECT_EQ(fabric_count(http_b, "lost_on_fabric"), 0u);
  EXPECT_EQ(fabric_count(http_a, "lost_on_fabric"), 0u);
}

// A server that hangs fills only the fabric's own buffer: past QueueSize frames are dropped
// and counted (queue_full) while the router's other links go on. A server that is gone: what
// waits for it is held up to ReconnectBuffer, the rest dropped and counted (link_down).
TEST_F(Fabric, AHungOrLostServerCostsOnlyTheFabricsOwnBuffer) {
  NatsCluster cluster(1);
  ASSERT_TRUE(cluster.ready()) << cluster.log(0);
  const uint16_t http = free_tcp_port();
  Site a(scratch_, "a", "Url = " + cluster.url(0) + "\nQueueSize = 65536\nReconnectBuffer = 4096\n",
         "127.0.0.1:" + std::to_string(http));
  ASSERT_TRUE(wait_until([&] { return a.router->err().find("connected to") != std::string::npos; })) << a.router->err();
  UdpPeer other;  // a second peer on the router's UDP server: it hears the first throughout
  ASSERT_TRUE(wait_until([&] {
    other.send_to(a.port, heartbeat(2, 1));
    a.send(heartbeat(1, 1));
    return a.heard(2, msg::Heartbeat::kId) > 0;
  }));
  auto fabric = [&](const std::string& field) { return fabric_count(http, field); };
  msg::EncapsulatedData big;  // 265 bytes a frame: the kernel's buffers fill sooner
  big.data.fill(0x5A);
  // The server hangs. Frames are sent until the fabric has dropped some for want of room (the
  // kernel's socket buffers fill first, then libnats' buffer up to QueueSize).
  cluster.signal(0, SIGSTOP);
  uint16_t n = 0;
  ASSERT_TRUE(wait_until(
      [&] {
        for (int i = 0; i < 2000; ++i) other.send_to(a.port, frame_of(big, 2, 1, static_cast<uint8_t>(n++)));
        return fabric("queue_full") > 0;
      },
      3000ms))
      << "sent " << n;
  EXPECT_LE(fabric("queued_bytes"), 65536u + 512u) << "QueueSize bounds the buffer";
  other.clear();
  a.send(system_time(1, 1, 7));
  EXPECT_TRUE(wait_until([&] { return other.received().count_msgid(2) == 1; })) << "the other links go on";
  cluster.signal(0, SIGCONT);
  // The server is gone: frames wait in ReconnectBuffer, and the rest are dropped as link_down.
  auto disconnects = [&] {
    size_t count = 0;
    for (size_t at = 0; (at = a.router->err().find("disconnected", at)) != std::string::npos; ++at) ++count;
    return count;
  };
  const size_t disconnects_before = disconnects();  // the hang may have looked like one already
  cluster.kill(0);
  ASSERT_TRUE(wait_until([&] { return disconnects() > disconnects_before; })) << a.router->err();
  const uint64_t down_before = fabric("link_down");
  for (uint8_t i = 0; i < 200; ++i) a.send(attitude(1, 1, i, i));
  EXPECT_TRUE(wait_until([&] { return fabric("link_down") >= down_before + 100; }))
      << "4096 bytes hold a few dozen frames of 200: " << fabric("link_down");
  other.clear();
  a.send(system_time(1, 1, 8));
  EXPECT_TRUE(wait_until([&] { return other.received().count_msgid(2) == 1; })) << "the other links go on";
  EXPECT_TRUE(a.router->running());
  std::cout << "[ figures  ] hung server: " << n << " frames sent, " << fabric("queue_full")
            << " dropped for want of room; lost server: " << fabric("link_down") - down_before << " of 200 dropped\n";
}

// FleetState: the cluster keeps each system's latest HEARTBEAT, position and status in
// JetStream, so `mavswitch fleet`, run after the vehicles have fallen silent, sees them all at
// once, with their newest values.
TEST_F(Fabric, ALateConsumerSeesTheFleetAtOnce) {
  NatsCluster cluster(3, {}, (scratch_.path() / "jetstream").string());
  ASSERT_TRUE(cluster.ready()) << cluster.log(0);
  Site a(scratch_, "a", "Url = " + cluster.url(0) + "\nFleetState = true\n");
  Site c(scratch_, "c", "Url = " + cluster.url(2) + "\nFleetState = true\n");
  // The stream is made once the cluster has elected its JetStream leader (retried until then).
  // Both routers connected (what a router publishes before it has a connection is dropped).
  ASSERT_TRUE(wait_until(
      [&] {
        return a.router->err().find("fleet state kept") != std::string::npos &&
               c.router->err().find("fleet state kept") != std::string::npos;
      },
      20000ms))
      << a.router->err() << c.router->err() << cluster.log(0);
  msg::GlobalPositionInt position;
  msg::SysStatus status;
  status.battery_remaining = 77;
  // A vehicle repeats its state every second. The stream's interest reaches the other nodes a
  // little after it is made, so a first burst may land on a node that does not yet forward it.
  auto send_state = [&] {
    for (int i = 0; i < 3; ++i) {  // older values, then the newest: lat 47.2, 47.3, 47.4
      position.lat = 471000000 + (i + 1) * 1000000;
      a.send(frame_of(position, 1, 1, uint8_t(i)));
      c.send(frame_of(position, 2, 1, uint8_t(i)));
    }
    a.send(heartbeat(1, 1));
    c.send(heartbeat(2, 1));
    a.send(frame_of(status, 1, 1));
  };
  const std::string tool = tool_path() + " fleet --json --nats " + cluster.url(1);
  std::string out;
  auto kept = [&] {
    return run_command(tool + " 2>&1", &out) == 0 && out.find("\"system\": 1") != std::string::npos &&
           out.find("\"system\": 2") != std::string::npos && out.find("\"battery_percent\": 77") != std::string::npos &&
           out.find("quadrotor") != std::string::npos;
  };
  bool both = false;
  for (int second = 0; second < 10 && !both; ++second) {
    send_state();
    both = wait_until(kept, 1000ms);
  }
  ASSERT_TRUE(both) << out << a.router->err();
  // The vehicles are silent from here on; a late reader sees what the cluster kept.
  out.clear();
  both = kept();
  ASSERT_TRUE(both) << out << a.router->err();
  EXPECT_NE(out.find("\"system\": 1"), std::string::npos) << out;
  EXPECT_NE(out.find("\"lat\": 47.4"), std::string::npos) << "the newest position: " << out;
  EXPECT_EQ(out.find("\"lat\": 47.3"), std::string::npos) << "not an older one: " << out;
  ASSERT_EQ(run_command(tool_path() + " fleet --nats " + cluster.url(0) + " 2>&1", &out), 0) << out;
  EXPECT_NE(out.find("ArduPilot"), std::string::npos) << "the table: " << out;
  // Without JetStream on the cluster: one clear error from the tool.
  NatsCluster plain(1);
  ASSERT_TRUE(plain.ready());
  out.clear();
  EXPECT_NE(run_command(tool_path() + " fleet --nats " + plain.url(0) + " 2>&1", &out), 0);
  EXPECT_NE(out.find("the fleet state"), std::string::npos) << out;
  EXPECT_NE(out.find("FleetState needs JetStream: start nats-server with -js"), std::string::npos) << out;
  // And the router with FleetState there: the same words.
  Site lone(scratch_, "lone", "Url = " + plain.url(0) + "\nFleetState = true\n");
  EXPECT_TRUE(wait_until(
      [&] {
        return lone.router->err().find("FleetState needs JetStream: start nats-server with -js") != std::string::npos;
      },
      15000ms))
      << lone.router->err();
}

// The fabric is a link as any other: a router whose only endpoint is a [NatsEndpoint] starts and
// routes (what the fabric brings reaches its own components: the vehicle shows in the API);
// SIGUSR1 lists the NATS link with its counts; SIGHUP removes the section's connection and
// adds it back, the other endpoints untouched.
TEST_F(Fabric, ANatsOnlyRouterStartsAndSighupAddsAndRemovesTheFabric) {
  NatsCluster cluster(1);
  ASSERT_TRUE(cluster.ready()) << cluster.log(0);
  Site vehicle(scratch_, "vehicle", "Url = " + cluster.url(0) + "\n");
  const uint16_t http = free_tcp_port();
  const std::string nats = "[NatsEndpoint fabric]\nUrl = " + cluster.url(0) + "\n";
  const std::string general = "[General]\nTcpServerPort = 0\n";
  const std::string conf = scratch_.write("ground.conf", general + nats).string();
  DaemonProcess ground({"-c", conf, "--http=127.0.0.1:" + std::to_string(http)});
  const auto heard = [&] {
    vehicle.send(heartbeat(1, 1));
    return http_request(http, "GET", "/api/v1/systems").body.find("\"system\": 1,") != std::string::npos;
  };
  ASSERT_TRUE(wait_until(heard, 10000ms)) << ground.err();
  EXPECT_GT(fabric_count(http, "rx_frames"), 0u);

  ground.signal(SIGUSR1);
  const std::regex counted(R"(nats fabric [^\n]*\n    totals: in [1-9]\d* frames)");
  ASSERT_TRUE(wait_until([&] { return std::regex_search(ground.out(), counted); })) << ground.out();

  // Gone from the file: the connection closes, the link leaves the API.
  const uint16_t udp = free_udp_port();
  scratch_.write("ground.conf", general + "[UdpEndpoint spare]\nMode = Server\nAddress = 127.0.0.1\nPort = " +
                                    std::to_string(udp) + "\n");
  ground.signal(SIGHUP);
  ASSERT_TRUE(wait_until([&] {
    return ground.err().find("reload: 1 added, 1 removed, 0 changed") != std::string::npos;
  })) << ground.err();
  EXPECT_EQ(http_request(http, "GET", "/api/v1/links").body.find("\"endpoint\": \"fabric\""), std::string::npos);
  // Back in the file: connected again, and the vehicle heard through it.
  scratch_.write("ground.conf", general + nats + "[UdpEndpoint spare]\nMode = Server\nAddress = 127.0.0.1\nPort = " +
                                    std::to_string(udp) + "\n");
  const uint64_t before = fabric_count(http, "rx_frames");
  ground.signal(SIGHUP);
  ASSERT_TRUE(wait_until([&] {
    return ground.err().find("reload: 1 added, 0 removed, 0 changed") != std::string::npos;
  })) << ground.err();
  ASSERT_TRUE(wait_until(
      [&] {
        vehicle.send(heartbeat(1, 1));
        return fabric_count(http, "rx_frames") > before;
      },
      10000ms))
      << ground.err();
  EXPECT_TRUE(ground.running());
  ground.signal(SIGTERM);
  EXPECT_EQ(ground.wait_exit(), 0) << ground.err();
}

// Through the API, with the token: a NATS connection opened at run time routes, is listed, and
// closes; its name cannot be taken twice.
TEST_F(Fabric, ANatsEndpointOpensAndClosesThroughTheApi) {
  NatsCluster cluster(1);
  ASSERT_TRUE(cluster.ready()) << cluster.log(0);
  Site vehicle(scratch_, "vehicle", "Url = " + cluster.url(0) + "\n");
  const std::string token = "fabric-api-token-0123456789";
  const auto token_file = scratch_.write("token", token + "\n");
  std::filesystem::permissions(token_file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
                               std::filesystem::perm_options::replace);
  const uint16_t http = free_tcp_port();
  const std::string conf =
      scratch_
          .write("ground.conf", "[General]\nTcpServerPort = 0\n[Http]\nTokenFile = " + token_file.string() +
                                    "\n[UdpEndpoint gcs]\nMode = Server\nAddress = 127.0.0.1\nPort = " +
                                    std::to_string(free_udp_port()) + "\n")
          .string();
  DaemonProcess ground({"-c", conf, "--http=127.0.0.1:" + std::to_string(http)});
  const std::string section = "[NatsEndpoint fabric]\nUrl = " + cluster.url(0) + "\n";
  ASSERT_TRUE(wait_until([&] { return http_request(http, "GET", "/api/v1").status == 200; })) << ground.err();
  EXPECT_EQ(http_request(http, "POST", "/api/v1/endpoints", section).status, 401) << "no token: no change";
  const HttpReply added = http_request(http, "POST", "/api/v1/endpoints", section, token);
  ASSERT_EQ(added.status, 201) << added.body << ground.err();
  EXPECT_EQ(http_request(http, "POST", "/api/v1/endpoints", section, token).status, 409) << "the name is taken";
  EXPECT_NE(http_request(http, "GET", "/api/v1/endpoints").body.find("\"kind\": \"nats\""), std::string::npos);
  ASSERT_TRUE(wait_until(
      [&] {
        vehicle.send(heartbeat(1, 1));
        return fabric_count(http, "rx_frames") > 0;
      },
      10000ms))
      << ground.err();
  EXPECT_EQ(http_request(http, "DELETE", "/api/v1/endpoints/fabric", "", token).status, 200);
  EXPECT_EQ(http_request(http, "GET", "/api/v1/links").body.find("\"endpoint\": \"fabric\""), std::string::npos);
  EXPECT_EQ(http_request(http, "DELETE", "/api/v1/endpoints/fabric", "", token).status, 404);
  EXPECT_TRUE(ground.running());
  ground.signal(SIGTERM);
  EXPECT_EQ(ground.wait_exit(), 0) << ground.err();
}
