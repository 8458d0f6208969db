// ideal_relay: the physical limit of relaying on this machine, to calibrate against. No
// parsing, no routing: UDP datagrams go out again with recvmmsg/sendmmsg batches; TCP bytes are
// copied to every other client in large writes.
//   ideal_relay udp --listen PORT [-e HOST:PORT]... [--peers] [--threads N]
//     --peers: also to the other senders. --threads N: N threads, each with its own socket on the
//     port (SO_REUSEPORT), a sender's datagrams steered to thread (MAVLink system id mod N): the
//     limit of relaying on N cores, for the workers' scaling. --kernel-hash: no steering, each
//     sender on the socket the kernel's hash picks, as mavswitch's workers share a port.
//   --split-targets K: a frame from system S goes only to the targets whose index is S mod K
//     (mod K), so that with --threads K each target hears from one thread only: what targets
//     written from several cores cost the kernel (bench/LOG.md, "Several workers: scaling").
//   ideal_relay tcp --listen PORT
// --work-ns N: spin N ns per read before relaying it, a stand-in for a router's user-space work,
// to measure what that work costs on this machine beyond itself (see bench/LOG.md: on a
// machine the load generator shares, it also draws preemptions).
#include <arpa/inet.h>
#include <linux/filter.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
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
size_t g_split_targets = 0;

void busy_work() {
  if (g_work_ns <= 0) return;
  const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(g_work_ns);
  while (std::chrono::steady_clock::now() < until) {
  }
}

bool same(const sockaddr_in& a, const sockaddr_in& b) {
  return a.sin_port == b.sin_port && a.sin_addr.s_addr == b.sin_addr.s_addr;
}

// The senders heard so far (for --peers), shared by the threads: appended under a lock (once
// per sender), read without one up to the published count.
struct KnownPeers {
  std::array<sockaddr_in, 4096> at{};
  std::atomic<size_t> count{0};
  std::mutex adding;

  void learn(const sockaddr_in& from) {
    const size_t n = count.load(std::memory_order_acquire);
    if (std::any_of(at.begin(), at.begin() + static_cast<long>(n), [&](const sockaddr_in& k) { return same(k, from); }))
      return;
    const std::lock_guard lock(adding);
    const size_t now = count.load(std::memory_order_relaxed);
    if (now == at.size() || std::any_of(at.begin(), at.begin() + static_cast<long>(now),
                                        [&](const sockaddr_in& k) { return same(k, from); }))
      return;
    at[now] = from;
    count.store(now + 1, std::memory_order_release);
  }
};

int udp_socket(int port, bool reuse_port) {
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  const int size = 8 << 20;
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size);
  setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof size);
  if (reuse_port) setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
  sockaddr_in a = address("127.0.0.1", port);
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) < 0) {
    perror("bind");
    std::exit(1);
  }
  return fd;
}

// Steers each datagram to socket (system id mod N) of the port's group; the program sees the
// datagram from its payload on: byte 5 of a MAVLink 2 frame, byte 3 of a MAVLink 1 frame.
void steer_by_system_id(int fd, uint32_t sockets) {
  sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 0), BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xFD, 0, 2),
      BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 5), BPF_JUMP(BPF_JMP | BPF_JA, 1, 0, 0),
      BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 3), BPF_STMT(BPF_ALU | BPF_MOD | BPF_K, sockets),
      BPF_STMT(BPF_RET | BPF_A, 0),
  };
  const sock_fprog prog{static_cast<unsigned short>(std::size(code)), code};
  if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog, sizeof prog) < 0) {
    perror("SO_ATTACH_REUSEPORT_CBPF");
    std::exit(1);
  }
}

void udp_relay(int fd, const std::vector<sockaddr_in>& targets, KnownPeers* known) {
  constexpr int kBatch = 64;
  std::vector<std::array<uint8_t, 2048>> bufs(kBatch);
  sockaddr_in from[kBatch];
  iovec iov[kBatch];
  mmsghdr in[kBatch];
  std::vector<mmsghdr> out;
  std::vector<iovec> out_iov;
  for (;;) {
    for (int i = 0; i < kBatch; ++i) {
      iov[i] = {bufs[static_cast<size_t>(i)].data(), bufs[static_cast<size_t>(i)].size()};
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
    const size_t peers = known != nullptr ? known->count.load(std::memory_order_acquire) + 1 : 0;
    out_iov.reserve(static_cast<size_t>(n) * (targets.size() + peers));
    for (int i = 0; i < n; ++i) {
      auto add = [&](const sockaddr_in& to) {
        out_iov.push_back({iov[i].iov_base, in[i].msg_len});
        mmsghdr m{};
        m.msg_hdr.msg_iov = &out_iov.back();
        m.msg_hdr.msg_iovlen = 1;
        m.msg_hdr.msg_name = const_cast<sockaddr_in*>(&to);
        m.msg_hdr.msg_namelen = sizeof to;
        out.push_back(m);
      };
      const uint8_t* frame = bufs[static_cast<size_t>(i)].data();
      const size_t system = in[i].msg_len > 5 ? frame[frame[0] == 0xFD ? 5 : 3] : 0;
      for (size_t t = 0; t < targets.size(); ++t) {
        if (g_split_targets == 0 || t % g_split_targets == system % g_split_targets) add(targets[t]);
      }
      if (known == nullptr) continue;
      known->learn(from[i]);
      const size_t count = std::min(known->count.load(std::memory_order_acquire), peers);
      for (size_t k = 0; k < count; ++k) {
        if (!same(known->at[k], from[i])) add(known->at[k]);
      }
    }
    for (size_t off = 0; off < out.size();) {
      const int sent =
          sendmmsg(fd, out.data() + off, static_cast<unsigned>(std::min<size_t>(out.size() - off, 1024)), 0);
      if (sent <= 0) break;
      off += static_cast<size_t>(sent);
    }
  }
}

bool g_kernel_hash = false;

int udp_relay(int port, const std::vector<sockaddr_in>& targets, bool peers, int threads) {
  static KnownPeers known;
  std::vector<int> fds;
  for (int t = 0; t < threads; ++t) fds.push_back(udp_socket(port, threads > 1));
  if (threads > 1 && !g_kernel_hash) steer_by_system_id(fds[0], static_cast<uint32_t>(threads));
  std::vector<std::thread> others;
  for (int t = 1; t < threads; ++t)
    others.emplace_back([&, t] { udp_relay(fds[static_cast<size_t>(t)], targets, peers ? &known : nullptr); });
  udp_relay(fds[0], targets, peers ? &known : nullptr);
  return 0;
}

int tcp_relay(int port) {
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  const int one = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a = address("127.0.0.1", port);
  if (bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a) < 0 || listen(listener, 64) < 0)
    return perror("listen"), 1;
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
  if (argc < 4)
    return std::fprintf(stderr,
                        "usage: ideal_relay udp|tcp --listen PORT [-e HOST:PORT]... [--peers] [--threads N] "
                        "[--kernel-hash] [--split-targets K]\n"),
           2;
  const std::string mode = argv[1];
  int port = 0;
  bool peers = false;
  int threads = 1;
  std::vector<sockaddr_in> targets;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--listen" && i + 1 < argc)
      port = std::stoi(argv[++i]);
    else if (a == "-e" && i + 1 < argc) {
      const std::string t = argv[++i];
      const auto colon = t.rfind(':');
      targets.push_back(address(t.substr(0, colon), std::stoi(t.substr(colon + 1))));
    } else if (a == "--peers")
      peers = true;
    else if (a == "--work-ns" && i + 1 < argc)
      g_work_ns = std::stol(argv[++i]);
    else if (a == "--threads" && i + 1 < argc)
      threads = std::max(1, std::stoi(argv[++i]));
    else if (a == "--split-targets" && i + 1 < argc)
      g_split_targets = std::stoul(argv[++i]);
    else if (a == "--kernel-hash")
      g_kernel_hash = true;
  }
  return mode == "tcp" ? tcp_relay(port) : udp_relay(port, targets, peers, threads);
}
