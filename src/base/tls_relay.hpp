// TLS around the operator's window, done with OpenSSL directly: Debian bookworm's civetweb (1.15)
// calls SSL_get_peer_certificate, which OpenSSL 3 no longer exports, so its own TLS would crash.
// The daemon's front (daemon/tls_front) and the tool's tunnel (tools/tls_tunnel) each hold one
// side of a TLS session and pass the plain bytes to civetweb over loopback; this is the copying
// they share. Its own library (mavswitch_tls): the routing library does not link libssl.
#pragma once

#include <openssl/ssl.h>

#include <atomic>
#include <memory>
#include <string>

namespace mavswitch::base {

struct SslContextFree {
  void operator()(SSL_CTX* c) const noexcept { SSL_CTX_free(c); }
};
struct SslFree {
  void operator()(SSL* s) const noexcept { SSL_free(s); }
};
using SslContext = std::unique_ptr<SSL_CTX, SslContextFree>;
using Ssl = std::unique_ptr<SSL, SslFree>;

// OpenSSL's queued errors as one line (and the queue emptied); `fallback` when there are none.
std::string tls_error(const std::string& fallback = "unknown TLS error");

// Bounds the socket's blocking reads and writes: a peer that stalls mid-record or stops reading
// costs a thread at most this long.
void set_io_timeout(int fd, int timeout_ms);

// Copies bytes both ways between the TLS session (on its socket) and the plain socket until
// either side closes or fails, or `stop` is set (looked at every 200 ms). Sends close_notify on
// the way out. Both sockets blocking, with set_io_timeout.
void tls_relay(SSL* tls, int plain, const std::atomic<bool>& stop);

}  // namespace mavswitch::base
