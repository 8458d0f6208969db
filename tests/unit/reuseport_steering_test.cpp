// The steering program against the kernel: sockets sharing a port on 127.0.0.1, datagrams from
// real sockets. Unplaced sources land where hashed_socket() says (which the UDP server relies
// on to know a peer's worker without asking); placed ones where they were placed, and back on
// their hash once the program no longer lists them.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

#include "transport/reuseport_steering.hpp"
#include "transport/socket_util.hpp"

namespace mavswitch::transport {
namespace {

constexpr uint32_t kSockets = 3;
constexpr size_t kSources = 24;

// kSockets sockets sharing a port on `listen`, and kSources sockets on `source` sending to it
// at `target`; `seen_as` is how the shared sockets see a source's address (IPv4 mapped in IPv6
// on a dual-stack socket).
struct SharedPort {
  explicit SharedPort(const char* listen = "127.0.0.1", const char* source = "127.0.0.1",
                      const char* target = "127.0.0.1", const char* seen_as = "127.0.0.1")
      : target_host(target) {
    const auto any = *SocketAddress::numeric(listen, 0);
    sockets.push_back(open_socket(any.family(), SOCK_DGRAM));
    bind_socket(sockets[0], any, "test", true);
    const auto same = *SocketAddress::numeric(listen, local_port(sockets[0]));
    for (uint32_t i = 1; i < kSockets; ++i) {
      sockets.push_back(open_socket(any.family(), SOCK_DGRAM));
      bind_socket(sockets.back(), same, "test", true);
    }
    port = local_port(sockets[0]);
    const auto from = *SocketAddress::numeric(source, 0);
    for (size_t i = 0; i < kSources; ++i) {
      const int fd = open_socket(from.family(), SOCK_DGRAM);
      bind_socket(fd, from, "source");
      sources.push_back(fd);
      addresses.push_back(*SocketAddress::numeric(seen_as, local_port(fd)));
    }
  }
  ~SharedPort() {
    for (int fd : sockets) ::close(fd);
    for (int fd : sources) ::close(fd);
  }
  // Each source sends one datagram (its index); returns the socket each one arrived at (-1: none).
  std::vector<int> where_each_lands() {
    const auto to = *SocketAddress::numeric(target_host, port);
    for (size_t i = 0; i < kSources; ++i) {
      const auto b = static_cast<uint8_t>(i);
      ::sendto(sources[i], &b, 1, 0, to.get(), to.size());
    }
    std::vector<int> landed(kSources, -1);
    size_t got = 0;
    for (int round = 0; round < 200 && got < kSources; ++round) {  // up to a second
      for (size_t s = 0; s < sockets.size(); ++s) {
        uint8_t b = 0;
        while (::recv(sockets[s], &b, 1, MSG_DONTWAIT) == 1) {
          if (b < kSources) landed[b] = static_cast<int>(s), ++got;
        }
      }
      if (got < kSources) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return landed;
  }
  std::vector<int> sockets, sources;
  std::vector<SocketAddress> addresses;
  const char* target_host;
  uint16_t port = 0;
};

bool has_ipv6_loopback() {
  const int fd = ::socket(AF_INET6, SOCK_DGRAM, 0);
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  a.sin6_addr = in6addr_loopback;
  const bool ok = fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  if (fd >= 0) ::close(fd);
  return ok;
}

void expect_where_the_hash_says(SharedPort& p) {
  ASSERT_TRUE(steer_by_source(p.sockets[0], kSockets, {}));
  const auto landed = p.where_each_lands();
  for (size_t i = 0; i < kSources; ++i) {
    EXPECT_EQ(landed[i], static_cast<int>(hashed_socket(steering_key(p.addresses[i]), kSockets))) << "source " << i;
  }
}

TEST(ReuseportSteering, UnplacedSourcesLandWhereTheHashSays) {
  SharedPort v4;
  expect_where_the_hash_says(v4);
  if (!has_ipv6_loopback()) GTEST_SKIP() << "no IPv6 loopback on this machine";
  SharedPort v6("::1", "::1", "::1", "::1");
  expect_where_the_hash_says(v6);
  SharedPort dual_stack("::", "127.0.0.1", "127.0.0.1", "::ffff:127.0.0.1");
  expect_where_the_hash_says(dual_stack);
}

TEST(ReuseportSteering, PlacedSourcesLandWherePlacedUntilNoLongerListed) {
  SharedPort p;
  std::vector<PlacedSource> placed;
  for (size_t i = 0; i < kSources; i += 2) {  // every other source, one socket further than its hash
    const uint32_t key = steering_key(p.addresses[i]);
    placed.push_back({key, (hashed_socket(key, kSockets) + 1) % kSockets});
  }
  ASSERT_TRUE(steer_by_source(p.sockets[1], kSockets, placed));
  auto landed = p.where_each_lands();
  for (size_t i = 0; i < kSources; ++i) {
    const uint32_t hashed = hashed_socket(steering_key(p.addresses[i]), kSockets);
    EXPECT_EQ(landed[i], static_cast<int>(i % 2 == 0 ? (hashed + 1) % kSockets : hashed)) << "source " << i;
  }
  ASSERT_TRUE(steer_by_source(p.sockets[2], kSockets, {}));
  landed = p.where_each_lands();
  for (size_t i = 0; i < kSources; ++i) {
    EXPECT_EQ(landed[i], static_cast<int>(hashed_socket(steering_key(p.addresses[i]), kSockets))) << "source " << i;
  }
}

TEST(ReuseportSteering, TooManyPlacedSourcesAreRefused) {
  SharedPort p;
  const std::vector<PlacedSource> placed(kMaxPlacedSources + 1, PlacedSource{1, 0});
  EXPECT_FALSE(steer_by_source(p.sockets[0], kSockets, placed));
}

}  // namespace
}  // namespace mavswitch::transport
