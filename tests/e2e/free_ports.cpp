#include "e2e/free_ports.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>

#include "e2e/peers.hpp"

namespace mavswitch::test {

namespace {

// The ports below the kernel's ephemeral range (ip_local_port_range), down to half its start.
// Choosing a free port by binding port 0 and closing it let a peer's socket, bound to port 0 a
// moment later, get the same port before the router bound it (CI saw it).
std::pair<uint16_t, uint16_t> chosen_range() {
  unsigned low = 32768, high = 60999;
  std::ifstream("/proc/sys/net/ipv4/ip_local_port_range") >> low >> high;
  if (low < 4096) throw std::runtime_error("ip_local_port_range starts below 4096: no room for test servers");
  return {static_cast<uint16_t>(low / 2), static_cast<uint16_t>(low - 1)};
}

uint16_t pick_port() {
  static std::mutex mutex;
  static std::set<uint16_t> given;
  static std::mt19937 random{std::random_device{}() ^ static_cast<unsigned>(::getpid())};
  static const auto [low, high] = chosen_range();
  const std::scoped_lock lock(mutex);
  std::uniform_int_distribution<unsigned> in_range(low, high);
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const auto port = static_cast<uint16_t>(in_range(random));
    if (given.contains(port) || !port_free(SOCK_DGRAM, port) || !port_free(SOCK_STREAM, port)) continue;
    given.insert(port);
    return port;
  }
  throw std::runtime_error("no free port below the ephemeral range after 1000 tries");
}

}  // namespace

uint16_t free_udp_port() { return pick_port(); }

uint16_t free_tcp_port() { return pick_port(); }

std::vector<uint16_t> free_tcp_ports(size_t n) {
  std::vector<uint16_t> ports;
  for (size_t i = 0; i < n; ++i) ports.push_back(pick_port());
  return ports;
}

bool port_free(int type, uint16_t port) {
  const int fd = ::socket(AF_INET, type | SOCK_CLOEXEC, 0);
  const int one = 1;
  if (type == SOCK_STREAM) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a = loopback(port);
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

}  // namespace mavswitch::test
