// https:// for the tool: OpenSSL connects to the router and checks its certificate, and
// civetweb's client speaks HTTP to a loopback port whose first connection is passed through the
// TLS session (civetweb 1.15's own TLS cannot run with OpenSSL 3; see base/tls_relay).
#pragma once

#include <atomic>
#include <string>
#include <thread>

#include "base/tls_relay.hpp"

namespace mavswitch::tools {

class TlsTunnel {
 public:
  // Connects and checks the certificate against `ca_file` (empty: the system's bundle) and the
  // host's name or address. Throws std::runtime_error saying why not.
  TlsTunnel(const std::string& host, int port, const std::string& ca_file);
  ~TlsTunnel();
  TlsTunnel(const TlsTunnel&) = delete;
  TlsTunnel& operator=(const TlsTunnel&) = delete;

  uint16_t port() const noexcept { return port_; }  // on 127.0.0.1

 private:
  void relay_first();
  base::SslContext context_;
  base::Ssl tls_;
  int socket_ = -1;    // to the router
  int listener_ = -1;  // for civetweb's client
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread relay_;
};

}  // namespace mavswitch::tools
