#include "transport/socket_util.hpp"

#include <linux/sock_diag.h>

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

uint64_t socket_drops(int fd) {
  uint32_t info[SK_MEMINFO_VARS] = {};
  socklen_t len = sizeof info;
  if (fd < 0 || getsockopt(fd, SOL_SOCKET, SO_MEMINFO, info, &len) != 0 || len <= SK_MEMINFO_DROPS * sizeof(uint32_t))
    return 0;
  return info[SK_MEMINFO_DROPS];
}

int open_socket(int family, int type) {
  const int fd = ::socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket: " + errno_text());
  return fd;
}

void bind_socket(int fd, const SocketAddress& address, const std::string& what, bool reuse_port) {
  const int one = 1;
  const int zero = 0;
  int type = 0;
  socklen_t type_len = sizeof type;
  getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &type_len);
  if (type == SOCK_STREAM) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (reuse_port) setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
  if (address.family() == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
  if (::bind(fd, address.get(), address.size()) < 0) {
    const std::string err = errno_text();
    ::close(fd);
    throw std::runtime_error(what + ": cannot bind " + address.to_string() + ": " + err);
  }
}

void ensure_port_free(const SocketAddress& address, int type, const std::string& what) {
  if (address.port() == 0) return;
  const int fd = open_socket(address.family(), type);
  const int one = 1;
  const int zero = 0;
  // TCP: SO_REUSEADDR only lets us past our own TIME_WAIT connections, never a listener. UDP:
  // SO_REUSEADDR would let us share a port, so the probe binds without it.
  if (type == SOCK_STREAM) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (address.family() == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
  const int rc = ::bind(fd, address.get(), address.size());
  const std::string err = errno_text();
  ::close(fd);
  if (rc < 0) throw std::runtime_error(what + ": cannot bind " + address.to_string() + ": " + err);
}

uint16_t local_port(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) < 0) return 0;
  if (ss.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(&ss)->sin6_port);
  return ntohs(reinterpret_cast<const sockaddr_in*>(&ss)->sin_port);
}

SharedSocket::~SharedSocket() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace mavswitch::transport
