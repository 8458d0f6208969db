// machine_probe: what the machine charges for the operations a relay is made of, to read the
// router's figures against. On the 2-vCPU VMs these benchmarks run on, a system call or a page
// fault costs several times what it does on bare metal, and that sets the floor under every
// CPU-per-message figure (docs/BENCHMARKS.md, "The machine").
//   machine_probe [--rounds N]
// Prints one line per probe: the median over N rounds (default 5) of the mean cost in ns.
//   syscall_ns        a system call that does nothing (getppid)
//   page_fault_ns     the first write to a page of fresh anonymous memory
//   wake_ns           one thread waking another through a pipe and being woken back, per wake
//   udp_send_ns       sendto of a 40-byte datagram to a socket on 127.0.0.1 (the receive side's
//                     kernel work included: on loopback the sender delivers)
//   udp_recv_ns       recvfrom of one such datagram already queued
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

double ns_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
}

double syscall_ns() {
  constexpr int kCalls = 200'000;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < kCalls; ++i) syscall(SYS_getppid);
  return ns_since(t0) / kCalls;
}

double page_fault_ns() {
  constexpr size_t kPages = 4096;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  auto* p =
      static_cast<char*>(mmap(nullptr, kPages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  if (p == MAP_FAILED) return -1;
  madvise(p, kPages * page, MADV_NOHUGEPAGE);  // one fault per page, not per 2 MiB
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < kPages; ++i) p[i * page] = 1;
  const double ns = ns_since(t0) / kPages;
  munmap(p, kPages * page);
  return ns;
}

double wake_ns() {
  constexpr int kTrips = 20'000;
  int there[2], back[2];
  if (pipe(there) != 0 || pipe(back) != 0) return -1;
  std::thread echo([&] {
    char c;
    for (int i = 0; i < kTrips; ++i) {
      if (read(there[0], &c, 1) != 1 || write(back[1], &c, 1) != 1) break;
    }
  });
  const auto t0 = std::chrono::steady_clock::now();
  char c = 'x';
  for (int i = 0; i < kTrips; ++i) {
    if (write(there[1], &c, 1) != 1 || read(back[0], &c, 1) != 1) break;
  }
  const double ns = ns_since(t0) / (2.0 * kTrips);
  echo.join();
  for (int fd : {there[0], there[1], back[0], back[1]}) close(fd);
  return ns;
}

// Sends kDatagrams to a socket that is drained afterwards (its buffer holds them all), then
// receives them: the two halves timed apart.
void udp_ns(double& send_ns, double& recv_ns) {
  constexpr int kDatagrams = 20'000;
  const int rx = socket(AF_INET, SOCK_DGRAM, 0), tx = socket(AF_INET, SOCK_DGRAM, 0);
  const int size = 32 << 20;
  setsockopt(rx, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size);
  setsockopt(rx, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  bind(rx, reinterpret_cast<sockaddr*>(&a), sizeof a);
  getsockname(rx, reinterpret_cast<sockaddr*>(&a), &len);
  uint8_t frame[40] = {0xFD};
  auto t0 = std::chrono::steady_clock::now();
  int sent = 0;
  for (; sent < kDatagrams; ++sent) {
    if (sendto(tx, frame, sizeof frame, 0, reinterpret_cast<sockaddr*>(&a), sizeof a) != sizeof frame) break;
  }
  send_ns = ns_since(t0) / std::max(sent, 1);
  t0 = std::chrono::steady_clock::now();
  int got = 0;
  for (; got < sent; ++got) {
    if (recv(rx, frame, sizeof frame, MSG_DONTWAIT) <= 0) break;
  }
  recv_ns = ns_since(t0) / std::max(got, 1);
  close(rx);
  close(tx);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
      rounds = std::max(1, std::atoi(argv[++i]));
    else
      return std::fprintf(stderr, "usage: machine_probe [--rounds N]\n"), 2;
  }
  std::vector<double> sys, fault, wake, send, recv;
  for (int r = 0; r < rounds; ++r) {
    sys.push_back(syscall_ns());
    fault.push_back(page_fault_ns());
    wake.push_back(wake_ns());
    double s = 0, rc = 0;
    udp_ns(s, rc);
    send.push_back(s);
    recv.push_back(rc);
  }
  std::printf("syscall_ns=%.0f page_fault_ns=%.0f wake_ns=%.0f udp_send_ns=%.0f udp_recv_ns=%.0f (medians of %d)\n",
              median(sys), median(fault), median(wake), median(send), median(recv), rounds);
  return 0;
}
