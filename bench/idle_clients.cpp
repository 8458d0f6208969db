// idle_clients: the user-space memory a router spends per connected, silent TCP client.
// Starts the router, measures its anonymous memory (heap and stacks: user space, not the
// kernel's socket buffers), connects N clients that stay silent (or, with --hello, send one
// HEARTBEAT each and then stay silent), measures again, and reports the difference per client.
// With --udp, the clients are UDP peers of a server port instead, each becoming a peer by one
// HEARTBEAT (which the router passes to every other peer: a fleet announcing itself at once).
// Measured again after three seconds of quiet ("after_quiet"): what the router keeps once it
// has trimmed what the burst grew.
//
//   idle_clients --clients N [--hello] -- ROUTER COMMAND with {tcp}
//   idle_clients --clients N --udp -- ROUTER COMMAND with {udp}
// With --hello too, the figure after three seconds of quiet is reported as for --udp.
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

size_t heartbeat(int c, uint8_t* frame) {
  const uint8_t payload[9] = {0, 0, 0, 0, 6, 8, 0, 0, 3};
  return protocol::encode_v2({.sysid = static_cast<uint8_t>(1 + c % 250), .compid = static_cast<uint8_t>(1 + c / 250)},
                             payload, 50, {frame, protocol::kMaxFrameLen});
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

// N UDP peers of the router's server port, each made a peer by one HEARTBEAT (after a first
// one, which sets up what the first peer costs once); what they cost once everyone has been
// heard and the router has passed each one's HEARTBEAT to the others.
int udp_peers(pid_t router, uint16_t port, int clients, uint8_t* frame) {
  const sockaddr_in to = loopback(port);
  std::vector<int> fds;
  auto peer = [&](int c) {
    const int fd = socket(AF_INET, SOCK_DGRAM, 0);
    [[maybe_unused]] auto w =
        sendto(fd, frame, heartbeat(c, frame), 0, reinterpret_cast<const sockaddr*>(&to), sizeof to);
    fds.push_back(fd);
  };
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the router is listening
  peer(clients);
  const long before = settled(router);
  for (int c = 0; c < clients; ++c) peer(c);
  const long after = settled(router);
  std::this_thread::sleep_for(std::chrono::seconds(3));
  const long quiet = settled(router);
  kill(router, SIGTERM);
  waitpid(router, nullptr, 0);
  for (int fd : fds) close(fd);
  std::printf(
      "udp_peers=%d router_anon_before_kib=%ld router_anon_after_kib=%ld bytes_per_peer=%.0f "
      "bytes_per_peer_after_quiet=%.0f\n",
      clients, before / 1024, after / 1024, static_cast<double>(after - before) / clients,
      static_cast<double>(quiet - before) / clients);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int clients = 1000;
  bool hello = false;
  bool udp = false;
  const char* usage = "usage: idle_clients --clients N [--hello | --udp] -- ROUTER COMMAND\n";
  int i = 1;
  for (; i < argc && std::strcmp(argv[i], "--") != 0; ++i) {
    if (std::strcmp(argv[i], "--clients") == 0 && i + 1 < argc)
      clients = std::atoi(argv[++i]);
    else if (std::strcmp(argv[i], "--hello") == 0)
      hello = true;
    else if (std::strcmp(argv[i], "--udp") == 0)
      udp = true;
    else
      return std::fprintf(stderr, "%s", usage), 2;
  }
  if (i + 1 >= argc) return std::fprintf(stderr, "%s", usage), 2;
  rlimit files{};
  getrlimit(RLIMIT_NOFILE, &files);
  files.rlim_cur = files.rlim_max;  // the router inherits it too
  setrlimit(RLIMIT_NOFILE, &files);
  if (files.rlim_cur < static_cast<rlim_t>(clients) + 100) {
    return std::fprintf(stderr, "idle_clients: %d clients need more open files than %lu\n", clients,
                        static_cast<unsigned long>(files.rlim_cur)),
           1;
  }

  const uint16_t port = bench::free_port(udp ? SOCK_DGRAM : SOCK_STREAM);
  const std::string placeholder = udp ? "{udp}" : "{tcp}";
  std::vector<std::string> args;
  for (++i; i < argc; ++i) {
    std::string a = argv[i];
    for (size_t pos; (pos = a.find(placeholder)) != std::string::npos;)
      a.replace(pos, placeholder.size(), std::to_string(port));
    args.push_back(a);
  }
  const pid_t router = bench::start_quietly(args);
  uint8_t frame[protocol::kMaxFrameLen];
  if (udp) return udp_peers(router, port, clients, frame);
  // One client first, so that what the first connection sets up once is in the baseline.
  const int first = connect_to(port);
  if (first < 0) return std::fprintf(stderr, "idle_clients: cannot reach the router\n"), 1;
  const long before = settled(router);
  std::vector<int> fds;
  for (int c = 0; c < clients; ++c) {
    const int fd = connect_to(port);
    if (fd < 0) return std::fprintf(stderr, "idle_clients: connection %d failed\n", c), 1;
    if (hello) [[maybe_unused]]
      auto w = write(fd, frame, heartbeat(c, frame));
    fds.push_back(fd);
  }
  const long after = settled(router);
  std::this_thread::sleep_for(std::chrono::seconds(hello ? 3 : 0));
  const long quiet = hello ? settled(router) : after;
  kill(router, SIGTERM);
  waitpid(router, nullptr, 0);
  for (int fd : fds) close(fd);
  close(first);
  std::printf(
      "clients=%d hello=%d router_anon_before_kib=%ld router_anon_after_kib=%ld bytes_per_client=%.0f "
      "bytes_per_client_after_quiet=%.0f\n",
      clients, hello ? 1 : 0, before / 1024, after / 1024, static_cast<double>(after - before) / clients,
      static_cast<double>(quiet - before) / clients);
  return 0;
}
