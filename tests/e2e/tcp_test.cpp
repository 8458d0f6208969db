// TCP server and client links, end to end on 127.0.0.1.
#include <gtest/gtest.h>

#include "e2e/peers.hpp"
#include "e2e/router_fixture.hpp"
#include "mavswitch/msg/attitude.hpp"
#include "mavswitch/msg/command_long.hpp"
#include "mavswitch/msg/heartbeat.hpp"

using namespace mavswitch;
using namespace mavswitch::test;

TEST(TcpServer, ABadClientAffectsNobodyElse) {
  RouterThread rt;
  const uint16_t tcp_port = free_tcp_port();
  const uint16_t udp_port = free_udp_port();
  rt.router.add_endpoint(tcp_server(tcp_port));
  rt.router.add_endpoint(udp_server(udp_port));
  rt.start();
  TcpPeer good(tcp_port);
  auto bad = std::make_unique<TcpPeer>(tcp_port);
  UdpPeer vehicle;
  ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == 2; }));
  good.send(heartbeat(255, 190));
  vehicle.send_to(udp_port, heartbeat(1, 1));
  ASSERT_TRUE(good.wait_frames(1));

  // The bad client: garbage, then half a frame, then it hangs up.
  bad->send(Bytes(3000, 0xFD));
  const Bytes half = attitude(66, 1, 5);
  bad->send(Bytes(half.begin(), half.begin() + 10));
  bad->close_now();
  ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == 1; }));

  good.clear();
  for (uint32_t i = 0; i < 200; ++i) vehicle.send(attitude(1, 1, i, static_cast<uint8_t>(i)));
  ASSERT_TRUE(good.wait_frames(200));
  EXPECT_EQ(good.received().count_msgid(msg::Attitude::kId), 200u);
  EXPECT_EQ(good.received().stats.crc_failures, 0u);
  good.send(command_long(255, 190, 1, 1));
  ASSERT_TRUE(vehicle.wait_frames(1));
}

// A header torn by noise (claiming a 255-byte payload) must not hold the frames behind it until
// 267 more bytes come: once the stream is quiet they go; and a client that leaves right after
// loses none of them (the end-of-stream pass runs on close).
TEST(TcpServer, FramesBehindABrokenHeaderGoOnceTheStreamIsQuietOrEnds) {
  RouterThread rt;
  const uint16_t tcp_port = free_tcp_port(), udp_port = free_udp_port();
  rt.router.add_endpoint(tcp_server(tcp_port));
  rt.router.add_endpoint(udp_server(udp_port));
  rt.start();
  UdpPeer gcs;
  gcs.send_to(udp_port, heartbeat(255, 190));
  const Bytes broken{0xFD, 0xFF, 0, 0, 7, 1, 1, 0, 0, 0};
  {
    TcpPeer vehicle(tcp_port);
    ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == 1 && rt.link_count(1) == 1; }));
    Bytes burst = broken;
    const Bytes hb = heartbeat(1, 1);
    burst.insert(burst.end(), hb.begin(), hb.end());
    vehicle.send(burst);
    ASSERT_TRUE(gcs.wait_frames(1, 2000ms)) << "the heartbeat waited behind the broken header";
    EXPECT_EQ(gcs.received().count_msgid(msg::Heartbeat::kId), 1u);
  }
  gcs.clear();
  TcpPeer leaver(tcp_port);
  ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == 1; }));
  Bytes burst = broken;
  for (uint8_t i = 0; i < 3; ++i) {
    const Bytes a = attitude(2, 1, i, i);
    burst.insert(burst.end(), a.begin(), a.end());
  }
  leaver.send(burst);
  leaver.close_now();
  ASSERT_TRUE(gcs.wait_frames(3, 2000ms));
  EXPECT_EQ(gcs.received().count_msgid(msg::Attitude::kId), 3u);
}

// A client that sent 100 kB of garbage and left still shows in its endpoint's totals: the
// counts do not die with the link.
TEST(TcpServer, AClientThatLeftStillShowsInItsEndpointsTotals) {
  RouterThread rt;
  const uint16_t tcp_port = free_tcp_port();
  rt.router.add_endpoint(tcp_server(tcp_port));
  rt.start();
  {
    TcpPeer garbage(tcp_port);
    ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == 1; }));
    garbage.send(Bytes(100'000, 0x55));
    garbage.send(heartbeat(9, 1));
    ASSERT_TRUE(wait_until([&] { return rt.router.endpoint_totals(0).counters.frames_in == 1; }));
  }
  ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == 0; }));
  const transport::Endpoint::Totals t = rt.router.endpoint_totals(0);
  EXPECT_EQ(t.links_closed, 1u);
  EXPECT_EQ(t.counters.bytes_in, 100'000u + heartbeat(9, 1).size());
  EXPECT_EQ(t.counters.frames_in, 1u);
  EXPECT_EQ(t.parser.bytes_skipped, 100'000u);
}

// A TCP link counts the frames it sent, not only their bytes: a server's client and a client
// endpoint's connection each count what their peer received.
TEST(TcpServer, ATcpLinkCountsTheFramesItSent) {
  RouterThread rt;
  TcpListener listener;
  const uint16_t server_port = free_tcp_port(), udp_port = free_udp_port();
  rt.router.add_endpoint(tcp_server(server_port));
  rt.router.add_endpoint(tcp_client(listener.port()));
  rt.router.add_endpoint(udp_server(udp_port));
  rt.start();
  TcpPeer client(server_port);
  auto far_end = listener.accept();
  ASSERT_TRUE(far_end);
  ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == 1 && rt.link_count(1) == 1; }));
  UdpPeer vehicle;
  constexpr uint32_t kFrames = 50;
  for (uint32_t i = 0; i < kFrames; ++i) vehicle.send_to(udp_port, attitude(1, 1, i, static_cast<uint8_t>(i)));
  ASSERT_TRUE(client.wait_frames(kFrames));
  ASSERT_TRUE(far_end->wait_frames(kFrames));
  rt.router.settle();
  EXPECT_EQ(rt.link_counters(0).frames_out, client.received().frames.size());
  EXPECT_EQ(rt.link_counters(1).frames_out, far_end->received().frames.size());
  EXPECT_EQ(rt.link_counters(0).bytes_out, kFrames * attitude(1, 1, 0).size());
}

TEST(TcpClient, ComesBackAfterTheServerRestarts) {
  auto listener = std::make_unique<TcpListener>();
  const uint16_t port = listener->port();
  const uint16_t udp_port = free_udp_port();
  RouterThread rt;
  auto spec = tcp_client(port);
  spec.retry_timeout = 1000;
  rt.router.add_endpoint(spec);
  rt.router.add_endpoint(udp_server(udp_port));
  rt.start();
  auto remote = listener->accept();
  ASSERT_NE(remote, nullptr);
  ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == 1; })) << "the router saw its connect complete";
  UdpPeer vehicle;
  vehicle.send_to(udp_port, heartbeat(1, 1));
  ASSERT_TRUE(remote->wait_frames(1));

  // The server goes away...
  remote.reset();
  listener.reset();
  ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == 0; }));
  vehicle.send(heartbeat(1, 1, 1));  // nowhere to go meanwhile; nothing stalls
  // ...and comes back on the same port: the router reconnects by itself.
  listener = std::make_unique<TcpListener>(port);
  remote = listener->accept(5000ms);
  ASSERT_NE(remote, nullptr) << "no reconnect within 5 s";
  ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == 1; }));
  vehicle.send(heartbeat(1, 1, 2));
  ASSERT_TRUE(remote->wait_frames(1));
  remote->send(command_long(255, 190, 1, 1));
  ASSERT_TRUE(vehicle.wait_frames(1));
  EXPECT_EQ(vehicle.received().count_msgid(msg::CommandLong::kId), 1u);
}

TEST(TcpClient, AnUnreachableTargetStallsNothing) {
  RouterThread rt;
  const uint16_t dead_port = free_tcp_port();  // nobody listens there
  const uint16_t udp_port = free_udp_port();
  auto spec = tcp_client(dead_port);
  spec.retry_timeout = 200;
  rt.router.add_endpoint(spec);
  rt.router.add_endpoint(udp_server(udp_port));
  rt.start();
  UdpPeer vehicle, gcs;
  gcs.send_to(udp_port, heartbeat(255, 190));
  ASSERT_TRUE(wait_until([&] { return rt.link_count(1) == 1; }));
  for (uint32_t i = 0; i < 100; ++i) {
    vehicle.send_to(udp_port, attitude(1, 1, i, static_cast<uint8_t>(i)));
    pace(2ms);  // the stream spans several reconnect attempts
  }
  ASSERT_TRUE(gcs.wait_frames(100));
  EXPECT_EQ(gcs.received().count_msgid(msg::Attitude::kId), 100u);
}

TEST(TcpClient, HostNamesResolveWithoutBlocking) {
  TcpListener listener;
  RouterThread rt;
  auto spec = tcp_client(listener.port());
  spec.address = "localhost";
  rt.router.add_endpoint(spec);
  rt.start();
  auto remote = listener.accept();
  ASSERT_NE(remote, nullptr);
}
