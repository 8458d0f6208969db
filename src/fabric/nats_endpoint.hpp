// [NatsEndpoint NAME]: the fleet fabric. Routers on many machines join one NATS cluster; to the
// routing core the cluster is one link, "the fabric" (fabric_link.hpp), on the router's thread,
// whose connection the router's loop drives (nats_poller.hpp). Frames cross byte for byte, one
// message each, on the subjects of fabric_subjects.hpp. A router subscribes to PREFIX.to.SYS.>
// for each system heard on its other links, and to what Subscribe asks of the rest (by default
// from.>: everything broadcast; a vehicle on a metered link takes from.255.> for the ground
// stations only). No echo: the server never sends a router its own messages, and routing never
// sends a frame back to the link it came from, so three or more routers on one cluster make no
// loops.
//
// This class keeps the connection: a keeper thread connects (blocking, never on the router's
// thread), and again while the cluster refuses; libnats itself moves to another server of the
// list when one goes. It also keeps the JetStream stream of FleetState.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "config/config.hpp"
#include "fabric/fabric_link.hpp"
#include "fabric/nats_handshake_guard.hpp"

struct __natsConnection;
struct __natsOptions;

namespace mavswitch::daemon {

class NatsDrive;

class NatsEndpoint {
 public:
  NatsEndpoint(Router& router, const EndpointConfig& config, std::shared_ptr<const routing::LinkPolicy> policy);
  ~NatsEndpoint();
  NatsEndpoint(const NatsEndpoint&) = delete;
  NatsEndpoint& operator=(const NatsEndpoint&) = delete;

  // Attaches the link and connects; a cluster not reachable yet (or refusing the credentials)
  // is one error line and retried in the background. Throws std::runtime_error for settings
  // that cannot work (a credentials file that does not load). Not on the router's thread while
  // it runs.
  void start();
  const std::string& name() const noexcept { return name_; }
  std::string description() const;
  // The link's counters, from the router's thread (any thread may ask).
  FabricLink::Report report() const;
  uint64_t reconnects() const noexcept { return reconnects_.load(std::memory_order_relaxed); }
  std::string server() const;  // the URL connected to; empty while not connected

 private:
  // Connects with options_ (any server of the list) and hands the connection to the link; false
  // when none took it (said once). The keeper thread's.
  bool connect();
  // The keeper thread: connects, and again every kRetry while that fails or after libnats gives
  // a connection up.
  void keep_connected();
  std::string url_list() const;
  // FleetState: makes (or updates) the JetStream stream of the latest state on the current
  // connection; false (said once) when the cluster has no JetStream, or is not ready yet. The
  // keeper thread's.
  bool keep_fleet_state();
  void note(const std::string& what, bool trouble);  // says what changed (see troubled_)
  void set_options();
  void closed();  // libnats gave the connection up (its callback thread)

  Router& router_;
  const std::string name_;
  const NatsSettings settings_;
  std::shared_ptr<const routing::LinkPolicy> policy_;
  std::shared_ptr<NatsDrive> drive_;
  std::unique_ptr<HandshakeGuard> guard_;  // ends a handshake libnats would never give up
  std::unique_ptr<FabricLink> link_;       // the router's thread's
  __natsOptions* options_ = nullptr;
  __natsConnection* connection_ = nullptr;  // the keeper's: made by it, used by the link
  __natsConnection* abandoned_ = nullptr;   // the keeper's: made as the router stopped, never used
  mutable std::mutex mutex_;
  std::string server_;             // under mutex_: connected to, empty when not
  std::string said_;               // under mutex_: the last state said
  bool troubled_ = false;          // under mutex_: trouble said since the last success
  bool closed_ = false;            // under mutex_: no connection (yet, or libnats gave it up)
  uint64_t connections_made_ = 0;  // under mutex_
  uint64_t closed_calls_ = 0;      // under mutex_: libnats' closed callbacks run, one per connection made
  bool stopping_ = false;          // under mutex_
  std::condition_variable keeper_wake_;
  std::thread keeper_;
  std::atomic<uint64_t> reconnects_{0};
};

}  // namespace mavswitch::daemon
