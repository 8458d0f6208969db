// ideal_relay: the physical limit of relaying on this machine, to calibrate against. No
// parsing, no routing: UDP datagrams go out again with recvmmsg/sendmmsg batches; TCP bytes are
// copied to every other client in large writes.
//   ideal_relay udp --listen PORT [-e HOST:PORT]... [--peers]   (--peers: also to the other senders)
//   ideal_relay tcp --listen PORT
// --work-ns N: spin N ns per read before relaying it, a stand-in for a router's user-space work,
// to measure what that work costs on this machine beyond itself (see BENCHMARKS.md: on a
// machine the load generator shares, it also draws preemptions).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

sockaddr_in address(const std::string& host, int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, host.c_str(), &a.sin_addr);
  return a;
}

long g_work_ns = 0;

void busy_work() {
  if (g_work_ns <= 0) return;
  const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(g_work_ns);
  while (std::chrono::steady_clock::now() < until) {
  }
}

bool same(const sockaddr_in& a, const sockaddr_in& b) { return a.sin_port == b.sin_port && a.sin_addr.s_addr == b.sin_addr.s_addr; }

int udp_relay(int port, const std::vector<sockaddr_in>& targets, bool peers) {
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  const int size = 8 << 20;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size);
  setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof size);
  sockaddr_in a = address("127.0.0.1", port);
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) < 0) return perror("bind"), 1;
  constexpr int kBatch = 64;
  static uint8_t bufs[kBatch][2048];
  sockaddr_in from[kBatch];
  iovec iov[kBatch];
  mmsghdr in[kBatch];
  std::vector<sockaddr_in> known;
  std::vector<mmsghdr> out;
  std::vector<iovec> out_iov;
  for (;;) {
    for (int i = 0; i < kBatch; ++i) {
      iov[i] = {bufs[i], sizeof bufs[i]};
      in[i] = {};
      in[i].msg_hdr.msg_iov = &iov[i];
      in[i].msg_hdr.msg_iovlen = 1;
      in[i].msg_hdr.msg_name = &from[i];
      in[i].msg_hdr.msg_namelen = sizeof from[i];
    }
    const int n = recvmmsg(fd, in, kBatch, MSG_WAITFORONE, nullptr);
    if (n <= 0) continue;
    busy_work();
    out.clear();
    out_iov.clear();
    out_iov.reserve(static_cast<size_t>(n) * (targets.size() + known.size() + 1));
    for (int i = 0; i < n; ++i) {
      if (peers && std::none_of(known.begin(), known.end(), [&](const sockaddr_in& k) { return same(k, from[i]); })) {
        known.push_back(from[i]);
      }
      auto add = [&](const sockaddr_in& to) {
        out_iov.push_back({bufs[i], in[i].msg_len});
        mmsghdr m{};
        m.msg_hdr.msg_iov = &out_iov.back();
        m.msg_hdr.msg_iovlen = 1;
        m.msg_hdr.msg_name = const_cast<sockaddr_in*>(&to);
        m.msg_hdr.msg_namelen = sizeof to;
        out.push_back(m);
      };
      for (const auto& t : targets) add(t);
      for (const auto& k : known) {
        if (!same(k, from[i])) add(k);
      }
    }
    for (size_t off = 0; off < out.size();) {
      const int sent = sendmmsg(fd, out.data() + off, static_cast<unsigned>(std::min<size_t>(out.size() - off, 1024)), 0);
      if (sent <= 0) break;
      off += static_cast<size_t>(sent);
    }
  }
}

int tcp_relay(int port) {
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  const int one = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a = address("127.0.0.1", port);
  if (bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a) < 0 || listen(listener, 64) < 0) return perror("listen"), 1;
  const int ep = epoll_create1(0);
  epoll_event ev{EPOLLIN, {.fd = listener}};
  epoll_ctl(ep, EPOLL_CTL_ADD, listener, &ev);
  std::vector<int> clients;
  static uint8_t buf[1 << 16];
  for (;;) {
    epoll_event events[64];
    const int n = epoll_wait(ep, events, 64, -1);
    for (int e = 0; e < n; ++e) {
      const int fd = events[e].data.fd;
      if (fd == listener) {
        const int c = accept(listener, nullptr, nullptr);
        setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        epoll_event cev{EPOLLIN, {.fd = c}};
        epoll_ctl(ep, EPOLL_CTL_ADD, c, &cev);
        clients.push_back(c);
        continue;
      }
      const ssize_t got = read(fd, buf, sizeof buf);
      if (got <= 0) {
        close(fd);
        clients.erase(std::remove(clients.begin(), clients.end(), fd), clients.end());
        continue;
      }
      busy_work();
      for (int c : clients) {
        if (c == fd) continue;
        for (ssize_t off = 0; off < got;) {
          const ssize_t w = write(c, buf + off, static_cast<size_t>(got - off));
          if (w <= 0) break;
          off += w;
        }
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) return std::fprintf(stderr, "usage: ideal_relay udp|tcp --listen PORT [-e HOST:PORT]... [--peers]\n"), 2;
  const std::string mode = argv[1];
  int port = 0;
  bool peers = false;
  std::vector<sockaddr_in> targets;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--listen" && i + 1 < argc) port = std::stoi(argv[++i]);
    else if (a == "-e" && i + 1 < argc) {
      const std::string t = argv[++i];
      const auto colon = t.rfind(':');
      targets.push_back(address(t.substr(0, colon), std::stoi(t.substr(colon + 1))));
    } else if (a == "--peers") peers = true;
    else if (a == "--work-ns" && i + 1 < argc) g_work_ns = std::stol(argv[++i]);
  }
  return mode == "tcp" ? tcp_relay(port) : udp_relay(port, targets, peers);
}
