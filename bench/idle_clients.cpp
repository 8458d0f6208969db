// idle_clients: the user-space memory a router spends per connected, silent TCP client.
// Starts the router, measures its anonymous memory (heap and stacks: user space, not the
// kernel's socket buffers), connects N clients that stay silent (or, with --hello, send one
// HEARTBEAT each and then stay silent), measures again, and reports the difference per client.
//
//   idle_clients --clients N [--hello] -- ROUTER COMMAND with {tcp}
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_support.hpp"
#include "protocol/encoder.hpp"

using namespace mavswitch;

namespace {

using bench::loopback;

// Anonymous memory of a process in bytes (from /proc/PID/smaps_rollup).
long anonymous_bytes(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/smaps_rollup");
  std::string key;
  long kb = 0;
  while (in >> key) {
    if (key == "Anonymous:") {
      in >> kb;
      return kb * 1024;
    }
    std::getline(in, key);
  }
  return -1;
}

// Waits until the value stops changing for a while (the router has accepted everyone).
long settled(pid_t pid) {
  long last = anonymous_bytes(pid);
  for (int stable = 0, i = 0; stable < 5 && i < 200; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const long now = anonymous_bytes(pid);
    stable = now == last ? stable + 1 : 0;
    last = now;
  }
  return last;
}

int connect_to(uint16_t port) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a = loopback(port);
    if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) return fd;
    close(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  int clients = 1000;
  bool hello = false;
  int i = 1;
  for (; i < argc && std::strcmp(argv[i], "--") != 0; ++i) {
    if (std::strcmp(argv[i], "--clients") == 0 && i + 1 < argc) clients = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--hello") == 0) hello = true;
    else return std::fprintf(stderr, "usage: idle_clients --clients N [--hello] -- ROUTER COMMAND\n"), 2;
  }
  if (i + 1 >= argc) return std::fprintf(stderr, "usage: idle_clients --clients N [--hello] -- ROUTER COMMAND\n"), 2;
  rlimit files{};
  getrlimit(RLIMIT_NOFILE, &files);
  files.rlim_cur = files.rlim_max;  // the router inherits it too
  setrlimit(RLIMIT_NOFILE, &files);
  if (files.rlim_cur < static_cast<rlim_t>(clients) + 100) {
    return std::fprintf(stderr, "idle_clients: %d clients need more open files than %lu\n", clients,
                        static_cast<unsigned long>(files.rlim_cur)), 1;
  }

  const uint16_t port = bench::free_port(SOCK_STREAM);
  std::vector<std::string> args;
  for (++i; i < argc; ++i) {
    std::string a = argv[i];
    for (size_t pos; (pos = a.find("{tcp}")) != std::string::npos;) a.replace(pos, 5, std::to_string(port));
    args.push_back(a);
  }
  const pid_t router = bench::start_quietly(args);
  // One client first, so that what the first connection sets up once is in the baseline.
  const int first = connect_to(port);
  if (first < 0) return std::fprintf(stderr, "idle_clients: cannot reach the router\n"), 1;
  const long before = settled(router);
  std::vector<int> fds;
  uint8_t frame[protocol::kMaxFrameLen];
  for (int c = 0; c < clients; ++c) {
    const int fd = connect_to(port);
    if (fd < 0) return std::fprintf(stderr, "idle_clients: connection %d failed\n", c), 1;
    if (hello) {
      const uint8_t payload[9] = {0, 0, 0, 0, 6, 8, 0, 0, 3};
      const size_t n = protocol::encode_v2({.sysid = static_cast<uint8_t>(1 + c % 250), .compid = static_cast<uint8_t>(1 + c / 250)},
                                           payload, 50, frame);
      [[maybe_unused]] auto w = write(fd, frame, n);
    }
    fds.push_back(fd);
  }
  const long after = settled(router);
  kill(router, SIGTERM);
  waitpid(router, nullptr, 0);
  for (int fd : fds) close(fd);
  close(first);
  std::printf("clients=%d hello=%d router_anon_before_kib=%ld router_anon_after_kib=%ld bytes_per_client=%.0f\n", clients,
              hello ? 1 : 0, before / 1024, after / 1024, static_cast<double>(after - before) / clients);
  return 0;
}
