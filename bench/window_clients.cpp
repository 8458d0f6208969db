// window_clients: the operator's window with many raw WebSocket ground stations. Starts the
// router with a UDP server for the vehicle, the HTTP window and a [WebSocketEndpoint], sends the
// vehicle's frames at --rate a second, opens --clients WebSocket clients that read everything,
// and reports: the window thread's share of a core and the router's, the frames each client got
// a second, GET /info's latency meanwhile, and the router's RSS idle, with the clients, and after
// they left (once it held still).
//
//   window_clients [--clients 1000] [--rate 700] [--seconds 10] -- MAVSWITCHD
#include <netinet/in.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_support.hpp"
#include "protocol/encoder.hpp"

using namespace mavswitch;
using Clock = std::chrono::steady_clock;

namespace {

long rss_kib(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

// The RSS once it held still for five looks 200 ms apart (10 s at most).
long settled_rss_kib(pid_t pid) {
  long last = -1;
  int still = 0;
  for (int i = 0; i < 50 && still < 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const long now = rss_kib(pid);
    still = now == last ? still + 1 : 0;
    last = now;
  }
  return last;
}

// The scheduler's run time of the router's thread named `name`, in seconds.
double thread_cpu_seconds(pid_t pid, const std::string& name) {
  std::error_code error;
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", error)) {
    std::ifstream comm(task.path() / "comm");
    std::string c;
    if (!std::getline(comm, c) || c != name) continue;
    std::ifstream schedstat(task.path() / "schedstat");
    double ns = 0;
    if (schedstat >> ns) return ns / 1e9;
  }
  return -1;
}

int connect_to(uint16_t port, bool blocking) {
  const int fd = socket(AF_INET, SOCK_STREAM | (blocking ? 0 : SOCK_NONBLOCK), 0);
  const sockaddr_in a = bench::loopback(port);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) < 0 && errno != EINPROGRESS) {
    close(fd);
    return -1;
  }
  return fd;
}

// GET /info's whole answer, in milliseconds (-1: none within 10 s).
double info_ms(uint16_t port) {
  const auto t0 = Clock::now();
  const int fd = connect_to(port, true);
  if (fd < 0) return -1;
  timeval timeout{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  const char request[] = "GET /info HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  if (write(fd, request, sizeof request - 1) != ssize_t(sizeof request - 1)) return close(fd), -1;
  char buf[4096];
  size_t got = 0;
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) got += size_t(n);
  close(fd);
  if (got == 0) return -1;
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  int clients = 1000, rate = 700, seconds = 10;
  std::string daemon;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--clients" && i + 1 < argc)
      clients = std::stoi(argv[++i]);
    else if (a == "--rate" && i + 1 < argc)
      rate = std::stoi(argv[++i]);
    else if (a == "--seconds" && i + 1 < argc)
      seconds = std::stoi(argv[++i]);
    else if (a == "--" && i + 1 < argc)
      daemon = argv[++i];
  }
  if (daemon.empty()) {
    std::fprintf(stderr, "usage: window_clients [--clients N] [--rate R] [--seconds S] -- MAVSWITCHD\n");
    return 2;
  }
  rlimit files{};
  getrlimit(RLIMIT_NOFILE, &files);
  files.rlim_cur = files.rlim_max;  // the router inherits it too
  setrlimit(RLIMIT_NOFILE, &files);
  if (files.rlim_cur < rlim_t(clients) * 2 + 64) {
    std::fprintf(stderr, "window_clients: the descriptor limit (%lu) is too low for %d clients\n",
                 static_cast<unsigned long>(files.rlim_cur), clients);
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);

  const uint16_t udp = bench::free_port(SOCK_DGRAM), http = bench::free_port(SOCK_STREAM);
  const auto dir = std::filesystem::temp_directory_path() / ("window_clients." + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const auto conf = dir / "main.conf";
  std::ofstream(conf) << "[General]\nTcpServerPort = 0\n[Http]\nAddress = 127.0.0.1\nPort = " << http
                      << "\n[UdpEndpoint vehicle]\nMode = Server\nAddress = 127.0.0.1\nPort = " << udp
                      << "\n[WebSocketEndpoint gcs]\nMaxClients = " << clients << "\n";
  const pid_t router = bench::start_quietly({daemon, "-c", conf.string()});
  double first_info = -1;
  for (int i = 0; i < 100 && first_info < 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    first_info = info_ms(http);
  }
  if (first_info < 0) {
    std::fprintf(stderr, "window_clients: the router's window did not answer\n");
    kill(router, SIGTERM);
    return 1;
  }
  const long rss_idle = settled_rss_kib(router);

  // The vehicle: ATTITUDE at `rate` a second, in bursts every 10 ms.
  std::atomic<bool> sending{true};
  std::thread vehicle([&] {
    const int fd = socket(AF_INET, SOCK_DGRAM, 0);
    const sockaddr_in to = bench::loopback(udp);
    uint8_t payload[28];
    std::memset(payload, 0x5A, sizeof payload);  // no zeros at its end: not truncated
    uint8_t frame[protocol::kMaxFrameLen];
    uint32_t sent = 0;
    const auto start = Clock::now();
    while (sending) {
      const auto due = uint32_t(std::chrono::duration<double>(Clock::now() - start).count() * rate);
      for (; sent < due; ++sent) {
        std::memcpy(payload, &sent, 4);
        const size_t n = protocol::encode_v2({.seq = uint8_t(sent), .sysid = 1, .compid = 1, .msgid = 30}, payload, 39,
                                             {frame, sizeof frame});
        sendto(fd, frame, n, 0, reinterpret_cast<const sockaddr*>(&to), sizeof to);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    close(fd);
  });

  // The clients: each asks for the upgrade and then reads whatever comes.
  const int ep = epoll_create1(0);
  std::vector<int> fds;
  const std::string upgrade =
      "GET /mavlink/gcs HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
  for (int i = 0; i < clients; ++i) {
    const int fd = connect_to(http, true);
    if (fd < 0 || write(fd, upgrade.data(), upgrade.size()) != ssize_t(upgrade.size())) {
      std::fprintf(stderr, "window_clients: client %d could not connect\n", i);
      break;
    }
    epoll_event ev{EPOLLIN, {.fd = fd}};
    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
    fds.push_back(fd);
  }
  std::atomic<bool> reading{true};
  std::atomic<uint64_t> bytes{0};
  std::atomic<int> upgraded{0}, closed{0};
  std::thread reader([&] {
    std::vector<uint8_t> buf(1 << 16);
    std::vector<bool> up(size_t(*std::max_element(fds.begin(), fds.end())) + 1);
    epoll_event events[256];
    while (reading) {
      const int n = epoll_wait(ep, events, 256, 100);
      for (int i = 0; i < n; ++i) {
        const int fd = events[i].data.fd;
        const ssize_t got = read(fd, buf.data(), buf.size());
        if (got <= 0) {
          epoll_ctl(ep, EPOLL_CTL_DEL, fd, nullptr);
          ++closed;
          continue;
        }
        if (!up[size_t(fd)] && memmem(buf.data(), size_t(got), " 101 ", 5) != nullptr)
          up[size_t(fd)] = true, ++upgraded;
        bytes += uint64_t(got);
      }
    }
  });
  for (int i = 0; i < 300 && upgraded < int(fds.size()); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::this_thread::sleep_for(std::chrono::seconds(2));  // queues and buffers grown

  const double window0 = thread_cpu_seconds(router, "mavswitch-http"), all0 = bench::cpu_seconds(router);
  const uint64_t bytes0 = bytes;
  const auto t0 = Clock::now();
  std::vector<double> info;
  while (Clock::now() - t0 < std::chrono::seconds(seconds)) {
    info.push_back(info_ms(http));
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
  const double window_cpu = (thread_cpu_seconds(router, "mavswitch-http") - window0) / elapsed;
  const double router_cpu = (bench::cpu_seconds(router) - all0) / elapsed;
  const double per_client = double(bytes - bytes0) / elapsed / double(std::max<size_t>(fds.size(), 1)) / (12 + 28 + 2);
  const long rss_clients = rss_kib(router);
  std::sort(info.begin(), info.end());
  const double info_p50 = info.empty() ? -1 : info[info.size() / 2], info_max = info.empty() ? -1 : info.back();

  reading = false;
  reader.join();
  for (const int fd : fds) close(fd);
  close(ep);
  const long rss_after = settled_rss_kib(router);
  sending = false;
  vehicle.join();
  kill(router, SIGTERM);
  waitpid(router, nullptr, 0);
  std::filesystem::remove_all(dir);
  std::printf(
      "clients=%zu upgraded=%d closed_by_router=%d rate=%d window_cpu_pct=%.1f router_cpu_pct=%.1f "
      "frames_per_client_s=%.0f info_ms_p50=%.1f info_ms_max=%.1f rss_idle_mib=%.1f rss_clients_mib=%.1f "
      "rss_after_mib=%.1f\n",
      fds.size(), upgraded.load(), closed.load(), rate, window_cpu * 100, router_cpu * 100, per_client, info_p50,
      info_max, double(rss_idle) / 1024, double(rss_clients) / 1024, double(rss_after) / 1024);
  return 0;
}
