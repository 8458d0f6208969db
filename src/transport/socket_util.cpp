#include "transport/socket_util.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace mavswitch::transport {

std::string errno_text() { return std::strerror(errno); }

void enlarge_datagram_buffers(int fd) {
  const int size = 4 << 20;
  // The FORCE variants pass the sysctl cap when we may (CAP_NET_ADMIN); otherwise the capped ask.
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) < 0) {
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  }
  if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof size) < 0) {
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
  }
}

int open_socket(int family, int type) {
  const int fd = ::socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket: " + errno_text());
  return fd;
}

void bind_socket(int fd, const SocketAddress& address, const std::string& what) {
  const int one = 1;
  const int zero = 0;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (address.family() == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
  if (::bind(fd, address.get(), address.size()) < 0) {
    const std::string err = errno_text();
    ::close(fd);
    throw std::runtime_error(what + ": cannot bind " + address.to_string() + ": " + err);
  }
}

}  // namespace mavswitch::transport
