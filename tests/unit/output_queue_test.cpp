// The per-link output queues: storage grows only as far as a peer falls behind, never past the
// capacity, and is given back after a quiet while; frames come out whole and in order across
// growth, wrap-around and moves.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <vector>

#include "transport/output_queue.hpp"
#include "transport/socket_address.hpp"

namespace mavswitch::transport {
namespace {

std::vector<uint8_t> frame(uint32_t n) {
  std::vector<uint8_t> f(20 + n % 200);
  for (size_t k = 0; k < f.size(); ++k) f[k] = static_cast<uint8_t>(n + k);
  return f;
}

// A connected pair of local sockets; a small send buffer makes the kernel take a few frames at a time.
struct SocketPair {
  int fds[2] = {-1, -1};
  explicit SocketPair(int type, int send_buffer = 0) {
    EXPECT_EQ(socketpair(AF_UNIX, type | SOCK_NONBLOCK, 0, fds), 0);
    if (send_buffer > 0) setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &send_buffer, sizeof send_buffer);
  }
  ~SocketPair() {
    close(fds[0]);
    close(fds[1]);
  }
};

// Writes and reads until the queue is empty and the reader has everything (bounded turns).
void drain(StreamQueue& q, const int fds[2], std::vector<uint8_t>& got) {
  for (int turn = 0; turn < 1000; ++turn) {
    ASSERT_NE(q.write_to(fds[0]), WriteResult::kError);
    uint8_t buf[65536];
    for (ssize_t r; (r = read(fds[1], buf, sizeof buf)) > 0;) got.insert(got.end(), buf, buf + r);
    if (q.empty()) return;
  }
  FAIL() << "the queue did not drain";
}

TEST(StreamQueue, GrowsAsAPeerFallsBehindAndKeepsOrderUpToItsCapacity) {
  SocketPair pair(SOCK_STREAM);
  const int* fds = pair.fds;
  StreamQueue q(64 * 1024);
  std::vector<uint8_t> expected, got;
  uint32_t n = 0;
  for (int round = 0; round < 20; ++round) {
    // Queue a varying amount (from one frame to more than the capacity), then drain it all.
    const uint32_t want = 1 + static_cast<uint32_t>(round * 37 % 600);
    for (uint32_t k = 0; k < want; ++k, ++n) {
      const auto f = frame(n);
      if (!q.push(f)) {
        EXPECT_GT(q.size() + f.size(), 64u * 1024) << "refused only when full";
        break;
      }
      expected.insert(expected.end(), f.begin(), f.end());
    }
    drain(q, fds, got);
  }
  EXPECT_EQ(got, expected);
}

// Frames pushed while a slow reader leaves earlier ones half-written: they wrap around the end
// of the ring (here of a capacity that is no power of two) and still come out whole and in order.
TEST(StreamQueue, FramesWrapAroundTheRingWhileThePeerReadsSlowly) {
  SocketPair pair(SOCK_STREAM, 4096);
  const int* fds = pair.fds;
  StreamQueue q(5000);
  std::vector<uint8_t> expected, got;
  uint32_t n = 0;
  size_t refused = 0;
  for (int turn = 0; turn < 3000; ++turn) {
    for (int k = 0; k < 3; ++k, ++n) {
      const auto f = frame(n);
      if (q.push(f)) {
        expected.insert(expected.end(), f.begin(), f.end());
      } else {
        ++refused;
      }
    }
    ASSERT_NE(q.write_to(fds[0]), WriteResult::kError);
    uint8_t buf[250];  // the reader takes less than was queued: the queue stays part-full
    const ssize_t r = read(fds[1], buf, sizeof buf);
    if (r > 0) got.insert(got.end(), buf, buf + r);
  }
  drain(q, fds, got);
  EXPECT_GT(refused, 0u) << "the reader was slow enough to fill the queue";
  EXPECT_TRUE(q.empty());
  // Whole frames only: what arrived is exactly the accepted frames, in order.
  EXPECT_EQ(got, expected);
}

// The same for datagrams: sends that take part of the queue while more is pushed wrap the
// ring of slots; every frame arrives once, whole, in order.
TEST(DatagramQueue, FramesWrapAroundTheRingWhileTheSocketTakesAFewAtATime) {
  SocketPair pair(SOCK_DGRAM, 4096);
  const int* fds = pair.fds;
  DatagramQueue q(37, /*coalesce=*/false);
  uint32_t pushed = 0, received = 0;
  uint64_t frames = 0, bytes = 0;
  auto receive = [&](int at_most) {
    uint8_t buf[512];
    for (ssize_t r; at_most-- > 0 && (r = read(fds[1], buf, sizeof buf)) > 0; ++received) {
      ASSERT_EQ(std::vector<uint8_t>(buf, buf + r), frame(received)) << "frame " << received;
    }
  };
  for (int turn = 0; turn < 2000; ++turn) {
    // Up to three more; a refused frame is offered again next turn, so numbering stays gap-free.
    for (int k = 0; k < 3 && q.push(frame(pushed)); ++k) ++pushed;
    ASSERT_NE(q.send_to(fds[0], nullptr, &frames, &bytes), WriteResult::kError);
    receive(2);
  }
  for (int turn = 0; turn < 1000 && !q.empty(); ++turn) {
    ASSERT_NE(q.send_to(fds[0], nullptr, &frames, &bytes), WriteResult::kError);
    receive(1000);
  }
  receive(1000);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(frames, pushed);
  EXPECT_EQ(received, pushed);
}

TEST(DatagramQueue, GrowsFromAFewSlotsAndSendsEveryFrameInOrder) {
  SocketPair pair(SOCK_DGRAM);
  const int* fds = pair.fds;
  DatagramQueue q(100, /*coalesce=*/false);
  uint32_t pushed = 0, received = 0;
  for (int round = 0; round < 10; ++round) {
    for (int k = 0; k < 10 * round + 1; ++k) {
      if (!q.push(frame(pushed))) {
        EXPECT_EQ(q.size(), 100u) << "refused only when full";
        break;
      }
      ++pushed;
    }
    uint64_t frames = 0, bytes = 0;
    for (int turn = 0; turn < 1000 && !q.empty(); ++turn) {  // the socket may take only a few at a time
      ASSERT_NE(q.send_to(fds[0], nullptr, &frames, &bytes), WriteResult::kError);
      uint8_t buf[512];
      for (ssize_t r; (r = read(fds[1], buf, sizeof buf)) > 0; ++received) {
        ASSERT_EQ(std::vector<uint8_t>(buf, buf + r), frame(received)) << "frame " << received;
      }
    }
    EXPECT_TRUE(q.empty());
  }
  EXPECT_EQ(received, pushed);
}

// Several peers' queues on one UDP socket in one go (a server's peers): every peer gets its
// own frames, whole and in order, one per datagram, with more datagrams than one sendmmsg holds
// (64), and each peer's share is counted as its own.
TEST(DatagramQueue, SeveralPeersOnOneSocketEachGetTheirOwnFramesInOrder) {
  constexpr size_t kPeers = 3;
  constexpr uint32_t kFrames = 50;  // 150 datagrams: three sendmmsg calls
  auto udp_socket = [] {
    const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    const int big = 1 << 20;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    const auto any = SocketAddress::numeric("127.0.0.1", 0);
    EXPECT_EQ(bind(fd, any->get(), any->size()), 0);
    return fd;
  };
  const int sender = udp_socket();
  int receivers[kPeers];
  std::vector<SocketAddress> addresses;
  for (int& r : receivers) {
    r = udp_socket();
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    getsockname(r, reinterpret_cast<sockaddr*>(&a), &len);
    addresses.emplace_back(reinterpret_cast<sockaddr*>(&a), len);
  }
  std::vector<std::unique_ptr<DatagramQueue>> queues;
  std::vector<DatagramQueue::PeerSend> sends;
  for (size_t p = 0; p < kPeers; ++p) {
    queues.push_back(std::make_unique<DatagramQueue>(100, /*coalesce=*/false, /*segment=*/false));
    for (uint32_t k = 0; k < kFrames; ++k) ASSERT_TRUE(queues[p]->push(frame(static_cast<uint32_t>(p * 1000 + k))));
    sends.push_back({queues[p].get(), &addresses[p]});
  }
  EXPECT_EQ(DatagramQueue::send_all(sender, sends), WriteResult::kDrained);
  for (size_t p = 0; p < kPeers; ++p) {
    EXPECT_TRUE(queues[p]->empty());
    EXPECT_EQ(sends[p].frames, kFrames);
    uint32_t received = 0;
    uint8_t buf[512];
    for (ssize_t r; (r = read(receivers[p], buf, sizeof buf)) > 0; ++received) {
      ASSERT_EQ(std::vector<uint8_t>(buf, buf + r), frame(static_cast<uint32_t>(p * 1000 + received))) << "peer " << p;
    }
    EXPECT_EQ(received, kFrames) << "peer " << p;
    close(receivers[p]);
  }
  close(sender);
}

// Drains q through a connected datagram pair, reading everything (bounded turns).
size_t drain_datagrams(DatagramQueue& q, const int fds[2]) {
  size_t received = 0;
  uint64_t frames = 0, bytes = 0;
  for (int turn = 0; turn < 1000 && !q.empty(); ++turn) {
    EXPECT_NE(q.send_to(fds[0], nullptr, &frames, &bytes), WriteResult::kError);
    uint8_t buf[2048];
    while (read(fds[1], buf, sizeof buf) > 0) ++received;
  }
  EXPECT_TRUE(q.empty());
  return received;
}

// A queue holds what its frames weigh: a fleet's HEARTBEATs (21 bytes) queued 500 deep take
// about 500 x 21 bytes and their lengths, not 500 slots sized for the largest frame (280).
TEST(DatagramQueue, HoldsWhatItsFramesWeigh) {
  DatagramQueue q(512);
  const std::vector<uint8_t> heartbeat(21, 0x5A);
  for (int k = 0; k < 500; ++k) ASSERT_TRUE(q.push(heartbeat));
  EXPECT_LE(q.allocated_bytes(), 2 * 500 * 21 + 2 * 512 * sizeof(uint16_t));
  EXPECT_GE(q.allocated_bytes(), 500u * 21);
}

// A burst grows the queue. At a trim (its worker's, once a second) it gives the storage back
// only when it is empty and has stayed under a quarter of it since the trim before: a queue
// that fills up to the same depth between trims keeps what it has, one that falls silent after
// a burst starts small again.
TEST(DatagramQueue, GivesItsStorageBackAtATrimAfterAQuietPeriodButNotBetweenBursts) {
  SocketPair pair(SOCK_DGRAM);
  const int big = 1 << 22;
  setsockopt(pair.fds[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
  setsockopt(pair.fds[1], SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
  DatagramQueue q(512, /*coalesce=*/false, /*segment=*/false);
  auto burst = [&](uint32_t frames) {
    for (uint32_t k = 0; k < frames; ++k) ASSERT_TRUE(q.push(frame(k)));
    EXPECT_EQ(drain_datagrams(q, pair.fds), frames);
  };
  burst(300);
  const size_t after_burst = q.allocated_bytes();
  EXPECT_GT(after_burst, 300u * 20);
  q.trim();  // the burst was in this period
  EXPECT_EQ(q.allocated_bytes(), after_burst);
  for (int period = 0; period < 3; ++period) {  // a burst in every period: kept
    burst(1);
    burst(300);
    q.trim();
    EXPECT_EQ(q.allocated_bytes(), after_burst);
  }
  ASSERT_TRUE(q.push(frame(0)));  // not empty at the trim: kept, whatever the period held
  q.trim();
  EXPECT_EQ(q.allocated_bytes(), after_burst);
  EXPECT_EQ(drain_datagrams(q, pair.fds), 1u);
  burst(2);  // a quiet period: given back
  q.trim();
  EXPECT_EQ(q.allocated_bytes(), 0u);
  burst(3);  // and the next frames start small
  EXPECT_LE(q.allocated_bytes(), 2048u);
}

// Coalesced, the frames that leave together are one iovec of whole frames back to back: the
// receiver gets exactly the frames pushed, in order, in datagrams of at most 1,400 bytes.
TEST(DatagramQueue, CoalescedDatagramsCarryWholeFramesInOrderUpToTheLimit) {
  SocketPair pair(SOCK_DGRAM);
  DatagramQueue q(200, /*coalesce=*/true);
  std::vector<uint8_t> expected;
  for (uint32_t k = 0; k < 150; ++k) {
    const auto f = frame(k);
    ASSERT_TRUE(q.push(f));
    expected.insert(expected.end(), f.begin(), f.end());
  }
  uint64_t frames = 0, bytes = 0;
  ASSERT_EQ(q.send_to(pair.fds[0], nullptr, &frames, &bytes), WriteResult::kDrained);
  EXPECT_EQ(frames, 150u);
  EXPECT_EQ(bytes, expected.size());
  std::vector<uint8_t> got;
  size_t datagrams = 0;
  uint8_t buf[4096];
  for (ssize_t r; (r = read(pair.fds[1], buf, sizeof buf)) > 0; ++datagrams) {
    EXPECT_LE(static_cast<size_t>(r), DatagramQueue::kCoalescedDatagram);
    got.insert(got.end(), buf, buf + r);
  }
  EXPECT_EQ(got, expected);
  EXPECT_LT(datagrams, 150u / 4) << "frames shared datagrams";
}

TEST(StreamQueue, GivesItsStorageBackAtATrimAfterAQuietPeriod) {
  SocketPair pair(SOCK_STREAM);
  StreamQueue q(256 * 1024);
  std::vector<uint8_t> got;
  for (uint32_t k = 0; k < 400; ++k) ASSERT_TRUE(q.push(frame(k)));
  drain(q, pair.fds, got);
  EXPECT_GT(q.allocated_bytes(), 16u * 1024);
  q.trim();  // the burst was in this period
  EXPECT_GT(q.allocated_bytes(), 16u * 1024);
  ASSERT_TRUE(q.push(frame(1)));
  drain(q, pair.fds, got);
  q.trim();
  EXPECT_EQ(q.allocated_bytes(), 0u);
  ASSERT_TRUE(q.push(frame(2)));
  EXPECT_LE(q.allocated_bytes(), 4096u);
}

}  // namespace
}  // namespace mavswitch::transport
