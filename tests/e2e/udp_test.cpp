// UDP server and client links, end to end on 127.0.0.1.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>
#include <set>
#include <string>

#include "e2e/peers.hpp"
#include "e2e/router_fixture.hpp"
#include "mavswitch/msg/command_long.hpp"
#include "mavswitch/msg/heartbeat.hpp"

using namespace mavswitch;
using namespace mavswitch::test;

TEST(UdpServer, EveryRemoteAddressIsItsOwnPeer) {
  RouterThread rt;
  const uint16_t port = rt.start_with_udp_server();
  UdpPeer vehicle, gcs1, gcs2;
  gcs1.send_to(port, heartbeat(255, 190));
  // With several workers, peers are read by different threads: gcs1 must be known before
  // gcs2 speaks for gcs2's heartbeat to reach it.
  ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == 1; }));
  gcs2.send_to(port, heartbeat(254, 190));
  ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == 2; }));
  vehicle.send_to(port, heartbeat(1, 1));
  ASSERT_TRUE(gcs1.wait_frames(2));  // gcs2's heartbeat and the vehicle's
  ASSERT_TRUE(gcs2.wait_frames(1));
  ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == 3; }));

  gcs1.clear();
  gcs2.clear();
  vehicle.clear();
  gcs1.send(command_long(255, 190, 1, 1));
  ASSERT_TRUE(vehicle.wait_frames(1));
  EXPECT_EQ(vehicle.received().count_msgid(msg::CommandLong::kId), 1u);
  EXPECT_EQ(gcs2.received().count_msgid(msg::CommandLong::kId), 0u) << "addressed to the vehicle only";
  EXPECT_EQ(gcs1.received().frames.size(), 0u) << "nothing comes back to its sender";
}

// Each peer goes when its own IdleTimeout ends, not at the next of once-a-second sweeps (up to a
// second late). Three peers heard 250 ms apart, all there at once: the once-a-second sweeps of
// before could not forget them all within 350 ms of their time.
TEST(UdpServer, ForgetsPeersThatFallSilentOnTime) {
  using Clock = std::chrono::steady_clock;
  RouterThread rt;
  const uint16_t port = free_udp_port();
  auto spec = udp_server(port);
  spec.idle_timeout = 600;
  rt.router.add_endpoint(spec);
  rt.start();
  UdpPeer gcs[3];
  std::vector<Clock::time_point> heard, gone;
  size_t count = 0;
  for (int k = 0; k < 3; ++k) {
    if (k > 0) pace(250ms);
    gcs[k].send_to(port, heartbeat(255, static_cast<uint8_t>(190 + k)));
    heard.push_back(Clock::now());
  }
  ASSERT_TRUE(wait_until(
      [&] {
        const size_t now = rt.link_count(0);
        for (size_t n = now; n < count; ++n) gone.push_back(Clock::now());
        count = now;
        return gone.size() >= 3 && count == 0;
      },
      3000ms));
  for (size_t k = 0; k < 3; ++k) {
    // 600 ms, a sweep's gap (100 ms) at most, and the polling's and the machine's slack.
    EXPECT_LT(gone[k] - heard[k], 950ms) << "peer " << k;
    EXPECT_GT(gone[k] - heard[k], 550ms) << "peer " << k << " went before its time";
  }
}

TEST(UdpServer, DatagramsWithoutMavlinkCreateNoPeer) {
  RouterThread rt;
  const uint16_t port = rt.start_with_udp_server();
  UdpPeer noise, gcs;
  for (int i = 0; i < 50; ++i) noise.send_to(port, Bytes(100, static_cast<uint8_t>(i)));
  gcs.send_to(port, heartbeat(255, 190));
  ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == 1; }));
  EXPECT_EQ(rt.link_count(0), 1u);
}

// At the peer limit a newcomer takes the place of the peer silent the longest, not of the
// oldest: a, b, c fill the three places, a speaks again, and d's arrival evicts b. One worker:
// with several, each evicts among its own peers.
TEST(UdpServer, PeerLimitEvictsTheLongestSilent) {
  RouterOptions one;
  one.workers = 1;
  RouterThread rt(one, RouterThread::Exactly{});
  const uint16_t port = free_udp_port();
  auto spec = udp_server(port);
  spec.max_peers = 3;
  rt.router.add_endpoint(spec);
  rt.start();
  UdpPeer a, b, c, d;
  auto heard = [&](uint64_t frames) {
    return wait_until([&] { return rt.router.routing().stats().frames == frames; });
  };
  auto peers = [&] {
    std::set<std::string> out;
    rt.router.for_each_link(0, [&](const Router::LinkReport& r) { out.insert(r.link.peer()); });
    return out;
  };
  auto name = [](const UdpPeer& p) { return "127.0.0.1:" + std::to_string(p.port()); };
  uint64_t frames = 0;
  const std::pair<UdpPeer*, uint8_t> hellos[] = {{&a, 10}, {&b, 11}, {&c, 12}, {&a, 10}};  // a again: heard last
  for (const auto& [p, sys] : hellos) {
    p->send_to(port, heartbeat(sys, 1));
    ASSERT_TRUE(heard(++frames));
    pace(3ms);  // a clock tick between them, so that "last heard" tells them apart
  }
  ASSERT_EQ(peers(), (std::set<std::string>{name(a), name(b), name(c)}));
  d.send_to(port, heartbeat(13, 1));
  ASSERT_TRUE(heard(++frames));
  EXPECT_EQ(peers(), (std::set<std::string>{name(a), name(c), name(d)})) << "b was silent the longest";
}

TEST(UdpClient, SendsToItsTargetAndRoutesReplies) {
  RouterThread rt;
  const uint16_t server_port = free_udp_port();
  UdpPeer gcs;  // what the router's UDP client talks to
  rt.router.add_endpoint(udp_server(server_port));
  rt.router.add_endpoint(udp_client(gcs.port()));
  rt.start();
  ASSERT_TRUE(wait_until([&] { return rt.link_count(1) == 1; }));
  UdpPeer vehicle;
  vehicle.send_to(server_port, heartbeat(1, 1));
  ASSERT_TRUE(gcs.wait_frames(1));
  EXPECT_EQ(gcs.received().count_msgid(msg::Heartbeat::kId), 1u);
  // The GCS answers the address the datagrams came from.
  sockaddr_in from{};
  socklen_t len = sizeof from;
  uint8_t buf[512];
  // Find the router's client port by receiving one more heartbeat with its address.
  vehicle.send_to(server_port, heartbeat(1, 1, 1));
  ASSERT_TRUE(wait_until(
      [&] { return ::recvfrom(gcs.fd(), buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &len) > 0; }));
  gcs.send_to(ntohs(from.sin_port), command_long(255, 190, 1, 1));
  ASSERT_TRUE(vehicle.wait_frames(1));
  EXPECT_EQ(vehicle.received().count_msgid(msg::CommandLong::kId), 1u);
}

TEST(UdpServer, SpeaksIpv6) {
  const int probe = ::socket(AF_INET6, SOCK_DGRAM, 0);
  sockaddr_in6 lo{};
  lo.sin6_family = AF_INET6;
  lo.sin6_addr = in6addr_loopback;
  if (probe < 0 || ::bind(probe, reinterpret_cast<sockaddr*>(&lo), sizeof lo) < 0) {
    if (probe >= 0) ::close(probe);
    GTEST_SKIP() << "no IPv6 loopback on this machine";
  }
  socklen_t len = sizeof lo;
  getsockname(probe, reinterpret_cast<sockaddr*>(&lo), &len);
  const uint16_t port = ntohs(lo.sin6_port);
  ::close(probe);

  RouterThread rt;
  auto spec = udp_server(port);
  spec.address = "::1";
  rt.router.add_endpoint(spec);
  rt.start();
  auto v6_socket = [] {
    const int fd = ::socket(AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_addr = in6addr_loopback;
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    return fd;
  };
  const int vehicle = v6_socket(), gcs = v6_socket();
  sockaddr_in6 to{};
  to.sin6_family = AF_INET6;
  to.sin6_addr = in6addr_loopback;
  to.sin6_port = htons(port);
  const Bytes hb = heartbeat(255, 190), vhb = heartbeat(1, 1);
  ::sendto(gcs, hb.data(), hb.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to);
  ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == 1; }));
  ::sendto(vehicle, vhb.data(), vhb.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to);
  uint8_t buf[512];
  EXPECT_TRUE(wait_until([&] { return ::recv(gcs, buf, sizeof buf, 0) == static_cast<ssize_t>(vhb.size()); }));
  ::close(vehicle);
  ::close(gcs);
}

// Frames queued for one peer at the moment of a write share datagrams (no delay added); with
// Coalesce off, one frame per datagram.
// Coalescing on: one datagram. Off: one frame per datagram, whether the frames of equal size
// leave in one segmentation-offload send (GSO, the default) or one send each.
TEST(UdpClient, CoalescesWhatIsQueuedTogetherUnlessTurnedOff) {
  for (const auto& way : {std::pair{true, true}, std::pair{false, true}, std::pair{false, false}}) {
    const bool coalesce = way.first, gso = way.second;  // not a structured binding: lambdas capture it
    RouterThread rt;
    UdpPeer gcs;
    const uint16_t server_port = free_udp_port();
    rt.router.add_endpoint(udp_server(server_port));
    auto client = udp_client(gcs.port());
    client.coalesce = coalesce;
    client.gso = gso;
    rt.router.add_endpoint(client);
    rt.start();
    ASSERT_TRUE(wait_until([&] { return rt.link_count(1) == 1; }));
    Bytes burst;  // ten frames in one datagram: routed in one read, written in one flush
    for (uint32_t i = 0; i < 10; ++i) {
      const Bytes f = attitude(1, 1, i, static_cast<uint8_t>(i));
      burst.insert(burst.end(), f.begin(), f.end());
    }
    UdpPeer vehicle;
    vehicle.send_to(server_port, burst);
    int datagrams = 0;
    size_t bytes = 0;
    uint8_t buf[4096];
    wait_until([&] {
      ssize_t n;
      while ((n = ::recv(gcs.fd(), buf, sizeof buf, 0)) > 0) {
        ++datagrams;
        bytes += static_cast<size_t>(n);
        if (!coalesce) {
          EXPECT_EQ(static_cast<size_t>(n), burst.size() / 10) << "one whole frame per datagram";
        }
      }
      return bytes == burst.size();
    });
    EXPECT_EQ(bytes, burst.size());
    EXPECT_EQ(datagrams, coalesce ? 1 : 10) << (coalesce ? "coalesced"
                                                : gso    ? "GSO: one frame per datagram"
                                                         : "one frame per datagram");
  }
}

// What the kernel dropped at the router's own socket (its buffer full while the worker was
// busy) is reported: the statistics used to say 121 lost where 14,839 were.
TEST(UdpServer, TheKernelsDropsAtTheRoutersSocketAreCounted) {
  RouterOptions one;
  one.workers = 1;
  RouterThread rt(one, RouterThread::Exactly{});
  const uint16_t port = rt.start_with_udp_server();
  UdpPeer vehicle;
  vehicle.send_to(port, heartbeat(1, 1));
  ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == 1; }));
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<void> holding;
  rt.router.event_loop().post([&holding, released] {
    holding.set_value();
    released.wait();  // the worker is busy: datagrams pile up in the kernel
  });
  holding.get_future().wait();
  const Bytes hb = heartbeat(1, 1);
  for (int k = 0; k < 30'000; ++k) vehicle.send(hb);
  release.set_value();
  // Every datagram is accounted for: read, or dropped by the kernel and counted.
  transport::Endpoint::Totals t;
  EXPECT_TRUE(wait_until([&] {
    t = rt.router.endpoint_totals(0);
    return t.counters.frames_in + t.kernel_drops == 30'001u;
  })) << t.counters.frames_in
      << " read, " << t.kernel_drops << " dropped";
  EXPECT_GT(t.kernel_drops, 0u) << "30,000 datagrams into a socket nobody read";
}
