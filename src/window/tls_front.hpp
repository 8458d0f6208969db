// HTTPS for the operator's window: listens where [Http] says, holds the TLS session with
// OpenSSL, and passes each connection's plain bytes to civetweb on a private loopback port. A
// thread per connection, bounded: the window serves a few operators, not a crowd; what it chose
// not to build is an event loop of non-blocking TLS sessions.
#pragma once

#include <atomic>
#include <list>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "base/tls_relay.hpp"

namespace mavswitch::daemon {

class TlsFront {
 public:
  // Loads the PEM's certificate chain and key and listens on address:port (0: any free port).
  // Throws std::runtime_error saying why it cannot.
  TlsFront(const std::string& address, uint16_t port, const std::string& pem, int max_connections);
  ~TlsFront() { stop(); }
  // Passes connections to 127.0.0.1:backend, at most `max_connections` at once (more are
  // closed). Once.
  void start(uint16_t backend);
  // Closes every connection and joins every thread; admits() is false from then on.
  void stop();
  TlsFront(const TlsFront&) = delete;
  TlsFront& operator=(const TlsFront&) = delete;

  uint16_t port() const noexcept { return port_; }
  // Whether a connection the backend accepted came from this front: the private port serves
  // nobody else, so plain HTTP cannot get round the TLS.
  bool admits(const char* address, int port) const;

 private:
  struct Connection {
    int client = -1;
    std::atomic<bool> done{false};
    std::thread thread;
  };
  void accept_loop();
  void serve(Connection& connection);
  void reap();  // joins the connections that ended

  base::SslContext context_;
  int listener_ = -1;
  int wake_ = -1;  // an eventfd: the destructor's word to the accept loop
  uint16_t port_ = 0;
  uint16_t backend_ = 0;
  size_t max_connections_ = 0;
  std::atomic<bool> stop_{false};
  std::list<Connection> connections_;  // the accept thread's until it is joined
  mutable std::mutex mutex_;
  std::set<uint16_t> relay_ports_;  // guarded by mutex_: the local ports of live relays
  std::thread acceptor_;
};

}  // namespace mavswitch::daemon
