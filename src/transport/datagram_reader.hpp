// Drains a UDP socket with recvmmsg: up to 32 datagrams per system call, until the kernel has
// nothing left (or a bound, so one busy socket cannot starve the others, or `host` pauses input).
#pragma once

#include <span>

#include "protocol/function_ref.hpp"
#include "transport/socket_address.hpp"

namespace mavswitch::transport {

class LinkHost;

using DatagramFn = FunctionRef<void(std::span<const uint8_t> datagram, const SocketAddress& from)>;

// Returns false on a socket error other than "nothing to read".
bool read_datagrams(int fd, LinkHost& host, DatagramFn on_datagram);

}  // namespace mavswitch::transport
