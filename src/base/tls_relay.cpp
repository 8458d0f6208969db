#include "base/tls_relay.hpp"

#include <openssl/err.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>

namespace mavswitch::base {

std::string tls_error(const std::string& fallback) {
  std::string text;
  for (unsigned long e; (e = ERR_get_error()) != 0;) {
    char line[256];
    ERR_error_string_n(e, line, sizeof line);
    text += (text.empty() ? "" : "; ") + std::string(line);
  }
  return text.empty() ? fallback : text;
}

void set_io_timeout(int fd, int timeout_ms) {
  const timeval t{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &t, sizeof t);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &t, sizeof t);
}

namespace {

bool write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

void tls_relay(SSL* tls, int plain, const std::atomic<bool>& stop) {
  char buf[16384];
  bool tls_open = true;
  // A record that is not data (TLS 1.3's session tickets right after the handshake) must not
  // make SSL_read wait for data on a blocking socket while the plain side has bytes to pass.
  SSL_clear_mode(tls, SSL_MODE_AUTO_RETRY);
  while (!stop.load(std::memory_order_relaxed)) {
    pollfd fds[2] = {{SSL_get_fd(tls), POLLIN, 0}, {plain, POLLIN, 0}};
    // Bytes OpenSSL already holds are not in the socket: poll would not see them.
    const int ready = SSL_pending(tls) > 0 ? 1 : ::poll(fds, 2, 200);
    if (ready < 0 && errno != EINTR) break;
    if (SSL_pending(tls) > 0 || (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      const int n = SSL_read(tls, buf, sizeof buf);
      if (n <= 0 && SSL_get_error(tls, n) == SSL_ERROR_WANT_READ) continue;
      if (n <= 0) {
        tls_open = SSL_get_error(tls, n) == SSL_ERROR_ZERO_RETURN;  // a close_notify may be answered
        break;
      }
      if (!write_all(plain, buf, static_cast<size_t>(n))) break;
    }
    if ((fds[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      const ssize_t n = ::recv(plain, buf, sizeof buf, 0);
      if (n <= 0) break;
      if (SSL_write(tls, buf, static_cast<int>(n)) <= 0) {
        tls_open = false;
        break;
      }
    }
  }
  if (tls_open) SSL_shutdown(tls);
  ERR_clear_error();  // this thread's queue: a failed read leaves entries nobody will ask for
}

}  // namespace mavswitch::base
