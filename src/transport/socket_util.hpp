// Small helpers for non-blocking sockets.
#pragma once

#include <memory>
#include <string>

#include "transport/socket_address.hpp"

namespace mavswitch::transport {

// A non-blocking, close-on-exec socket; throws std::runtime_error on failure.
int open_socket(int family, int type);
// Binds; an IPv6 wildcard also accepts IPv4. Throws with the address in the message. A TCP
// socket gets SO_REUSEADDR (to bind past its own TIME_WAIT connections), a UDP one never: there
// it would let a socket of any user share the port and take its datagrams. With reuse_port,
// several sockets (one per I/O worker) share the port, only with sockets of the same user; a
// port someone else holds is still refused (see ensure_port_free).
void bind_socket(int fd, const SocketAddress& address, const std::string& what, bool reuse_port = false);
// Throws (naming `what`) unless `address` can be bound by a socket of `type` without sharing:
// checked before binding shared sockets, so that two routers on one port fail as they would
// without SO_REUSEPORT instead of silently splitting the traffic.
void ensure_port_free(const SocketAddress& address, int type, const std::string& what);
// The local port a bound socket got (for port 0).
uint16_t local_port(int fd);
std::string errno_text();
// Asks for large kernel buffers on a datagram socket, so a burst is not lost between two
// wake-ups of the loop (the kernel caps the request at net.core.[rw]mem_max).
void enlarge_datagram_buffers(int fd);
// Datagrams the kernel dropped at this socket (its receive buffer was full), since it opened.
// One system call: for statistics, not per frame.
uint64_t socket_drops(int fd);

// A socket that other threads may write to directly (DirectWrite): it closes when the last of
// its holders, the link or a writer's retired target, lets go, never while a write may use it.
class SharedSocket {
 public:
  explicit SharedSocket(int fd) noexcept : fd_(fd) {}
  ~SharedSocket();
  SharedSocket(const SharedSocket&) = delete;
  SharedSocket& operator=(const SharedSocket&) = delete;
  int fd() const noexcept { return fd_; }

 private:
  int fd_;
};

}  // namespace mavswitch::transport
