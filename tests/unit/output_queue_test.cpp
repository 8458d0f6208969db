// The per-link output queues: storage grows only as far as a peer falls behind, never past the
// capacity; frames come out whole and in order across growth and wrap-around.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <vector>

#include "transport/output_queue.hpp"

namespace mavswitch::transport {
namespace {

std::vector<uint8_t> frame(uint32_t n) {
  std::vector<uint8_t> f(20 + n % 200);
  for (size_t k = 0; k < f.size(); ++k) f[k] = static_cast<uint8_t>(n + k);
  return f;
}

TEST(StreamQueue, GrowsAsAPeerFallsBehindAndKeepsOrderUpToItsCapacity) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds), 0);
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
    while (!q.empty()) {
      ASSERT_NE(q.write_to(fds[0]), WriteResult::kError);
      uint8_t buf[65536];
      for (ssize_t r; (r = read(fds[1], buf, sizeof buf)) > 0;) got.insert(got.end(), buf, buf + r);
    }
  }
  EXPECT_EQ(got, expected);
  close(fds[0]);
  close(fds[1]);
}

TEST(DatagramQueue, GrowsFromAFewSlotsAndSendsEveryFrameInOrder) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0, fds), 0);
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

}  // namespace
}  // namespace mavswitch::transport
