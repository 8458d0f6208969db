// A worker's writer for other workers' UDP links: a link's frames queued in one iteration leave
// together, and the queue kept for a link that is no longer written goes at the next trim.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <vector>

#include "router/direct_writer.hpp"
#include "transport/socket_address.hpp"

namespace mavswitch {
namespace {

struct LoopbackUdp {
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
  LoopbackUdp() {
    const auto any = transport::SocketAddress::numeric("127.0.0.1", 0);
    EXPECT_EQ(bind(fd, any->get(), any->size()), 0);
  }
  ~LoopbackUdp() { close(fd); }
  transport::SocketAddress address() const {
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    return {reinterpret_cast<sockaddr*>(&a), len};
  }
  std::vector<std::vector<uint8_t>> datagrams() const {
    std::vector<std::vector<uint8_t>> got;
    uint8_t buf[2048];
    for (ssize_t r; (r = read(fd, buf, sizeof buf)) > 0;) got.emplace_back(buf, buf + r);
    return got;
  }
};

TEST(DirectWriter, ALinksFramesLeaveTogetherAndAQueueNoLongerWrittenGoesAtTheNextTrim) {
  LoopbackUdp sender, receiver;
  const DirectTarget target(
      transport::DirectWrite{sender.fd, {}, nullptr, receiver.address(), 64, /*coalesce=*/true, true});
  DirectWriter writer(0);
  const std::vector<uint8_t> a(30, 0xA1), b(40, 0xB2), c(50, 0xC3);
  writer.queue(3, target, a);
  writer.queue(3, target, b);
  writer.flush();
  std::vector<uint8_t> ab = a;
  ab.insert(ab.end(), b.begin(), b.end());
  EXPECT_EQ(receiver.datagrams(), std::vector<std::vector<uint8_t>>{ab}) << "one datagram, both frames, in order";
  EXPECT_EQ(target.frames_out.load(), 2u);
  EXPECT_EQ(writer.frames_written(), 2u);
  EXPECT_GT(writer.storage(), 0u);

  writer.trim();  // written to since the last trim: its queue stays
  EXPECT_GT(writer.storage(), 0u);
  writer.trim();  // not written to since: its queue goes
  EXPECT_EQ(writer.storage(), 0u);

  writer.queue(3, target, c);  // and comes back when it is written to again
  writer.flush();
  EXPECT_EQ(receiver.datagrams(), std::vector<std::vector<uint8_t>>{c});
  EXPECT_EQ(target.frames_out.load(), 3u);
}

}  // namespace
}  // namespace mavswitch
