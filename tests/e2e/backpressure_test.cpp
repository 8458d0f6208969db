// A receiver that stops reading fills only its own bounded queue: its drops are counted and
// everyone else keeps full rate without loss.
#include <gtest/gtest.h>

#include "e2e/peers.hpp"
#include "e2e/router_fixture.hpp"
#include "mavswitch/msg/attitude.hpp"
#include "mavswitch/msg/file_transfer_protocol.hpp"

using namespace mavswitch;
using namespace mavswitch::test;

TEST(Backpressure, ASlowReceiverLosesOnlyItsOwnFrames) {
  RouterThread rt;
  const uint16_t tcp_port = free_tcp_port();
  const uint16_t udp_port = free_udp_port();
  auto slow_spec = tcp_server(tcp_port);
  slow_spec.stream_queue_bytes = 8192;
  rt.router.add_endpoint(slow_spec);
  rt.router.add_endpoint(udp_server(udp_port));
  rt.start();

  TcpPeer slow(tcp_port);  // connects, then never reads
  const int small = 4096;
  setsockopt(slow.fd(), SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  UdpPeer vehicle, fast;
  fast.send_to(udp_port, heartbeat(255, 190));
  ASSERT_TRUE(wait_until([&] { return rt.link_count(1) == 1 && rt.link_count(0) == 1; }));

  // The vehicle sends in bursts, each once the fast GCS has everything so far: kernel buffers
  // on this shared machine never overflow, so any loss would be the router's doing.
  constexpr uint32_t kFrames = 20000;
  constexpr uint32_t kBurst = 250;
  for (uint32_t i = 0; i < kFrames; ++i) {
    vehicle.send_to(udp_port, large_frame(1, 1, static_cast<uint8_t>(i)));
    if ((i + 1) % kBurst == 0) {
      ASSERT_TRUE(
          wait_until([&] { return fast.received().count_msgid(msg::FileTransferProtocol::kId) == i + 1; }, 5000ms))
          << "fast receiver has " << fast.received().count_msgid(msg::FileTransferProtocol::kId) << " of " << i + 1;
    }
  }
  ASSERT_EQ(fast.received().count_msgid(msg::FileTransferProtocol::kId), kFrames);
  EXPECT_EQ(fast.received().stats.crc_failures, 0u);
  const auto slow_counters = rt.link_counters(0);
  EXPECT_GT(slow_counters.dropped_queue_full, 0u) << "the slow receiver's overflow is counted";
  EXPECT_LT(slow_counters.bytes_out, uint64_t{kFrames} * large_frame(1, 1).size());
}

// One read can hold more frames for a link than its queue: a full queue is written out before
// any frame is dropped, so a receiver that keeps up loses nothing however small the queue.
TEST(Backpressure, AFullQueueIsWrittenBeforeAFrameIsDropped) {
  RouterThread rt;
  const uint16_t tcp_port = free_tcp_port();
  UdpPeer gcs;
  const int big = 4 << 20;
  if (setsockopt(gcs.fd(), SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big) != 0) {
    setsockopt(gcs.fd(), SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
  }
  rt.router.add_endpoint(tcp_server(tcp_port));
  auto to_gcs = udp_client(gcs.port());
  to_gcs.datagram_queue_frames = 8;
  rt.router.add_endpoint(to_gcs);
  rt.start();

  TcpPeer vehicle(tcp_port);
  ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == 1; }));
  constexpr uint32_t kFrames = 200;  // one write: 25 times what the GCS's queue holds
  Bytes burst;
  for (uint32_t i = 0; i < kFrames; ++i) {
    const Bytes f = attitude(1, 1, i, static_cast<uint8_t>(i));
    burst.insert(burst.end(), f.begin(), f.end());
  }
  vehicle.send(burst);
  EXPECT_TRUE(gcs.wait_frames(kFrames, 5000ms)) << "the GCS got " << gcs.received().frames.size() << " of " << kFrames;
  EXPECT_EQ(gcs.received().count_msgid(msg::Attitude::kId), kFrames);
  EXPECT_EQ(rt.link_counters(1).dropped_queue_full, 0u);
}

// What a slow receiver's queue grew to is given back once it has caught up and its link has
// been quiet for a trim period (about a second): a burst does not leave a queue at its
// high-water mark for good. The storage is what the link reports to statistics.
TEST(Backpressure, QueueStorageASlowReceiverGrewIsGivenBackOnceItCatchesUp) {
  RouterThread rt;
  const uint16_t tcp_port = free_tcp_port();
  rt.router.add_endpoint(tcp_server(tcp_port));
  rt.start();
  TcpPeer gcs(tcp_port);  // reads nothing until the burst is over
  const int small = 4096;
  setsockopt(gcs.fd(), SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  gcs.send(heartbeat(255, 190));
  ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == 1; }));
  TcpPeer vehicle(tcp_port);
  ASSERT_TRUE(wait_until([&] { return rt.link_count(0) == 2; }));

  auto largest_storage = [&] {
    size_t largest = 0;
    rt.router.for_each_link(0, [&](const Router::LinkReport& r) { largest = std::max(largest, r.queue_storage); });
    return largest;
  };
  constexpr uint32_t kFrames = 400;  // 106 KB: more than the kernel holds for a peer reading nothing
  Bytes burst;
  for (uint32_t i = 0; i < kFrames; ++i) {
    const Bytes f = large_frame(1, 1, static_cast<uint8_t>(i));
    burst.insert(burst.end(), f.begin(), f.end());
  }
  vehicle.send(burst);
  ASSERT_TRUE(wait_until([&] { return largest_storage() >= 32 * 1024; }))
      << "the slow receiver's queue grew to " << largest_storage() << " B";
  ASSERT_TRUE(gcs.wait_frames(kFrames, 5000ms)) << "the receiver caught up: " << gcs.received().frames.size();
  // Down to the few KiB a link that keeps up has (a stream queue's first 4 KiB are kept).
  EXPECT_TRUE(wait_until([&] { return largest_storage() <= 4096; }, 4000ms))
      << "still held after two trim periods of quiet: " << largest_storage() << " B";
}
