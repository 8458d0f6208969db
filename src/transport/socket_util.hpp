// Small helpers for non-blocking sockets.
#pragma once

#include <string>

#include "transport/socket_address.hpp"

namespace mavswitch::transport {

// A non-blocking, close-on-exec socket; throws std::runtime_error on failure.
int open_socket(int family, int type);
// Binds with SO_REUSEADDR; an IPv6 wildcard also accepts IPv4. Throws with the address in the message.
void bind_socket(int fd, const SocketAddress& address, const std::string& what);
std::string errno_text();
// Asks for large kernel buffers on a datagram socket, so a burst is not lost between two
// wake-ups of the loop (the kernel caps the request at net.core.[rw]mem_max).
void enlarge_datagram_buffers(int fd);

}  // namespace mavswitch::transport
