// Endpoints opened and closed while the router runs: the other links lose nothing, routes
// learned elsewhere hold, and a closed endpoint's port is free again.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "e2e/router_fixture.hpp"
#include "mavswitch/msg/attitude.hpp"
#include "mavswitch/msg/command_long.hpp"
#include "support/test_support.hpp"

using namespace mavswitch;
using namespace mavswitch::test;

namespace {

class RuntimeEndpoints : public ::testing::TestWithParam<unsigned> {};

}  // namespace

TEST_P(RuntimeEndpoints, OpenedAndClosedWhileFramesFlowElsewhere) {
  RouterOptions options;
  options.workers = GetParam();
  RouterThread rt(options, RouterThread::Exactly{});
  const uint16_t vehicle_port = free_udp_port(), gcs_port = free_udp_port();
  rt.router.add_endpoint(udp_server(vehicle_port));
  rt.router.add_endpoint(udp_server(gcs_port));
  rt.start();
  UdpPeer vehicle, gcs;
  vehicle.send_to(vehicle_port, heartbeat(1, 1));
  gcs.send_to(gcs_port, heartbeat(255, 190));
  ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == 1 && rt.link_count(1) == 1; }));

  // The vehicle streams 3,000 frames (about 3 s) while endpoints come and go.
  constexpr uint32_t kFrames = 3000;
  std::atomic<bool> streaming{true};
  std::thread stream([&] {
    for (uint32_t i = 0; i < kFrames; ++i) {
      vehicle.send_to(vehicle_port, attitude(1, 1, i, static_cast<uint8_t>(i)));
      if (i % 10 == 9) pace(std::chrono::milliseconds(10));
    }
    streaming = false;
  });

  // A TCP server and a UDP client, opened mid-stream: each gets the vehicle's frames.
  const uint16_t tcp_port = free_tcp_port(), udp_port = free_udp_port();
  UdpPeer listener;
  const size_t tcp_index = rt.router.open_endpoint(tcp_server(tcp_port));
  const size_t udp_index = rt.router.open_endpoint(udp_client(listener.port()));
  auto added_udp = udp_server(udp_port);
  added_udp.name = "added";
  const size_t added_index = rt.router.open_endpoint(added_udp);
  TcpPeer tcp(tcp_port);
  EXPECT_TRUE(wait_until([&] { return tcp.received().count_msgid(msg::Attitude::kId) > 20; }));
  EXPECT_TRUE(wait_until([&] { return listener.received().count_msgid(msg::Attitude::kId) > 20; }));
  UdpPeer added_peer;
  added_peer.send_to(udp_port, heartbeat(255, 191));
  EXPECT_TRUE(wait_until([&] { return added_peer.received().count_msgid(msg::Attitude::kId) > 20; }));

  // An endpoint whose port is taken: an error, and nothing else changes.
  EXPECT_THROW(rt.router.open_endpoint(udp_server(vehicle_port)), Router::StartError);

  // Closed mid-stream: the TCP client is dropped, both ports are free again at once.
  rt.router.close_endpoint(tcp_index);
  rt.router.close_endpoint(added_index);
  EXPECT_TRUE(rt.router.endpoint_closed(tcp_index));
  EXPECT_TRUE(port_free(SOCK_STREAM, tcp_port)) << "the TCP server's port is free again";
  EXPECT_TRUE(port_free(SOCK_DGRAM, udp_port)) << "the UDP server's port is free again";
  EXPECT_TRUE(wait_until([&] {
    tcp.poll();  // what was sent before the close, then the end
    return tcp.closed_by_peer();
  }));
  EXPECT_TRUE(streaming) << "the stream outlasted the changes (otherwise nothing was in flight)";
  stream.join();

  // Nothing the ground station was sent is lost, and the route to the vehicle holds.
  EXPECT_TRUE(wait_until([&] { return gcs.received().count_msgid(msg::Attitude::kId) == kFrames; }, 5000ms))
      << gcs.received().count_msgid(msg::Attitude::kId) << " of " << kFrames;
  gcs.send(command_long(255, 190, 1, 1));
  EXPECT_TRUE(wait_until([&] { return vehicle.received().count_msgid(msg::CommandLong::kId) == 1; }));
  EXPECT_EQ(listener.received().count_msgid(msg::CommandLong::kId), 0u) << "targeted: the vehicle only";
  EXPECT_FALSE(rt.router.endpoint_closed(udp_index));
  EXPECT_EQ(rt.link_count(tcp_index), 0u);
}

INSTANTIATE_TEST_SUITE_P(Workers, RuntimeEndpoints, ::testing::Values(1u, 3u),
                         [](const auto& p) { return p.param == 1 ? "OneWorker" : "ThreeWorkers"; });
