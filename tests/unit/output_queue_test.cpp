// The per-link output queues: storage grows only as far as a peer falls behind, never past the
// capacity; frames come out whole and in order across growth and wrap-around.
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

}  // namespace
}  // namespace mavswitch::transport
