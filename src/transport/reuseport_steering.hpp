// Which of the sockets sharing a UDP port (one per I/O worker, SO_REUSEPORT, bound in order)
// the kernel hands a datagram to: a small classic-BPF program attached to the port's group.
// It hashes the source address and port, as the kernel would, except for the sources listed
// as placed, which it sends to the socket they were placed on. Replacing the program is atomic
// for the kernel: datagrams already queued stay where they are.
#pragma once

#include <cstdint>
#include <span>
#include <utility>

#include "transport/socket_address.hpp"

namespace mavswitch::transport {

// What the program computes from a datagram's source: the IPv4 address (also mapped in IPv6)
// or the four words of the IPv6 address folded into one, each exclusive-or'ed with the port.
uint32_t steering_key(const SocketAddress& source) noexcept;
// The socket a source goes to when it is not placed.
uint32_t hashed_socket(uint32_t key, uint32_t sockets) noexcept;

struct PlacedSource {
  uint32_t key;
  uint32_t socket;
};
// At most this many placed sources: each costs the program two instructions and every
// datagram of an unplaced source one comparison.
inline constexpr size_t kMaxPlacedSources = 1024;

// Attaches the program to the group `fd` belongs to; false when the kernel refuses it (errno
// says why) or `placed` holds too many.
bool steer_by_source(int fd, uint32_t sockets, std::span<const PlacedSource> placed);

}  // namespace mavswitch::transport
