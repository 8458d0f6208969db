// Drives libnats connections from the router's EventLoop (libnats' external event loop API). The
// router's thread watches a connection's socket, reads it (natsConnection_ProcessReadEvent), and
// writes what was published during a loop iteration in one write when it ends
// (ProcessWriteEvent). libnats keeps its own threads only for what is not per frame: connecting,
// reconnecting, pings.
//
// libnats calls the adapter from any of its threads, holding the connection's lock. A call on the
// router's thread acts at once; others are posted to it, in order. The socket is watched through
// a duplicate of its descriptor that only the router's thread closes: libnats closing its own on
// another thread never lets the number be reused under the loop.
//
// With TLS, libnats reads a TLS record to its end inside ProcessReadEvent: a record cut off by a
// dying link holds the router's thread until the pings give the connection up (about 4 s). That
// is libnats' design; reading TLS on a thread of our own again was not worth a second path.
#pragma once

#include <functional>
#include <memory>
#include <unordered_map>

#include "router/router.hpp"

struct __natsConnection;
struct __natsOptions;

namespace mavswitch::daemon {

class NatsPoller;

// What one endpoint's connections are driven by: made with make_shared, and kept as long as the
// options it is installed in (their pollers hold it too, until forgotten).
class NatsDrive : public std::enable_shared_from_this<NatsDrive> {
 public:
  // after_read: the router's thread, after each read: routes what the read brought.
  NatsDrive(Router& router, std::function<void()> after_read) : router_(router), after_read_(std::move(after_read)) {}
  ~NatsDrive();
  NatsDrive(const NatsDrive&) = delete;
  NatsDrive& operator=(const NatsDrive&) = delete;

  // Connections made with these options are driven by this. Throws std::runtime_error.
  void install(__natsOptions* options);
  // The router's thread (or while it does not run), before natsConnection_Destroy: nothing
  // calls into the connection after this.
  void forget(__natsConnection* connection);
  void forget_all();  // the same, for every connection: the endpoint is going

 private:
  friend class NatsPoller;
  Router& router_;
  std::function<void()> after_read_;
  // The router's thread: the poller of each connection attached.
  std::unordered_map<__natsConnection*, std::shared_ptr<NatsPoller>> pollers_;
};

}  // namespace mavswitch::daemon
