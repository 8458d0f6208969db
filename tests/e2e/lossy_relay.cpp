#include "e2e/lossy_relay.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <random>
#include <stdexcept>
#include <vector>

#include "support/loopback_listener.hpp"

namespace mavswitch::test {
namespace {

// The length of the whole frame at the front of `b`: 0 when more bytes are needed, -1 when the
// front byte starts none (skipped).
long frame_length(const std::vector<uint8_t>& b) {
  if (b.empty()) return 0;
  if (b[0] != 0xFD && b[0] != 0xFE) return -1;
  if (b.size() < 3) return 0;
  const long n = b[0] == 0xFE ? 8 + long(b[1]) : 12 + long(b[1]) + ((b[2] & 1) != 0 ? 13 : 0);
  return long(b.size()) >= n ? n : 0;
}

int connect_to(uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

}  // namespace

LossyRelay::LossyRelay(uint16_t target, double loss, uint32_t seed) : target_(target), loss_(loss), seed_(seed) {
  listener_ = test::loopback_listener(port_);
  if (listener_ < 0) throw std::runtime_error("the lossy relay cannot listen");
  thread_ = std::thread([this] { run(); });
}

LossyRelay::~LossyRelay() {
  stop_ = true;
  thread_.join();
  ::close(listener_);
}

void LossyRelay::run() {
  std::mt19937 random(seed_);
  std::bernoulli_distribution lose(loss_);
  int client = -1, server = -1;
  std::vector<uint8_t> pending[2];  // [0]: client to server, [1]: server to client
  while (!stop_) {
    pollfd fds[3] = {{listener_, POLLIN, 0}, {client, POLLIN, 0}, {server, POLLIN, 0}};
    if (::poll(fds, 3, 50) <= 0) continue;
    if ((fds[0].revents & POLLIN) != 0) {
      const int fd = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (client >= 0) ::close(client), ::close(server);
      client = fd, server = connect_to(target_);
      if (server < 0) ::close(client), client = -1;  // not listening yet: the client connects again
      pending[0].clear(), pending[1].clear();
      continue;
    }
    for (int side = 0; side < 2; ++side) {
      const int from = side == 0 ? client : server, to = side == 0 ? server : client;
      if (from < 0 || (fds[1 + side].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      uint8_t buf[65536];
      const ssize_t n = ::read(from, buf, sizeof buf);
      if (n <= 0) {  // one side went: the hop goes, as a cable pulled
        ::close(client), ::close(server);
        client = server = -1;
        break;
      }
      std::vector<uint8_t>& p = pending[side];
      p.insert(p.end(), buf, buf + n);
      std::vector<uint8_t> out;
      for (long len; (len = frame_length(p)) != 0;) {
        if (len < 0) {
          p.erase(p.begin());
          continue;
        }
        if (lose(random))
          ++dropped_;
        else
          out.insert(out.end(), p.begin(), p.begin() + len), ++passed_;
        p.erase(p.begin(), p.begin() + len);
      }
      for (size_t at = 0; at < out.size();) {  // loopback: a blocking write takes it
        const ssize_t w = ::write(to, out.data() + at, out.size() - at);
        if (w <= 0) break;
        at += size_t(w);
      }
    }
  }
  if (client >= 0) ::close(client), ::close(server);
}

}  // namespace mavswitch::test
