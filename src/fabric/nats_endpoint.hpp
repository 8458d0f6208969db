// [NatsEndpoint NAME]: the fleet fabric. Routers on many machines join one NATS cluster; to the
// routing core the cluster is one link, "the fabric" (fabric_link.hpp), a transport link on the
// worker the router placed the endpoint on, whose connection that worker's loop drives
// (nats_poller.hpp). Frames cross byte for byte, one message each, on the subjects of
// fabric_subjects.hpp. A router subscribes to PREFIX.to.SYS.> for each system heard on its other
// links, and to what Subscribe asks of the rest (by default from.>: everything broadcast; a
// vehicle on a metered link takes from.255.> for the ground stations only). No echo: the server
// never sends a router its own messages, and routing never sends a frame back to the link it came
// from, so three or more routers on one cluster make no loops.
//
// The endpoint keeps the connection: a keeper thread connects (blocking, never on the loop's
// thread), and again while the cluster refuses; libnats itself moves to another server of the
// list when one goes. It also keeps the JetStream stream of FleetState. The router makes it
// through nats_maker(), like any endpoint: started, reported, reloaded and closed on its worker.
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
#include "transport/endpoint.hpp"

struct __natsConnection;
struct __natsOptions;

namespace mavswitch::daemon {

class NatsDrive;

// What makes [NatsEndpoint] sections' endpoints (EndpointSpec::maker). `route_timeout`: the
// router's (a system published within it is local: fabric_link.hpp).
std::shared_ptr<const transport::EndpointMaker> nats_maker(const NatsSettings& settings, int64_t route_timeout);

class NatsEndpoint final : public transport::Endpoint {
 public:
  NatsEndpoint(transport::EndpointSpec spec, transport::LinkHost& host, const NatsSettings& settings,
               int64_t route_timeout);
  // On the worker's thread (or once its loop stopped): the keeper stops (a handshake under way
  // ends at once) and the connection closes.
  ~NatsEndpoint() override;

  // Brings the link up and connects; a cluster not reachable yet (or refusing the credentials)
  // is one error line and retried in the background. Throws std::runtime_error for settings
  // that cannot work (a credentials file that does not load).
  void start() override;
  void for_each_link(const std::function<void(const transport::Link&)>& f) const override;
  // "nats NAME URLS prefix P: connected to URL, N reconnects"
  std::string describe() const override;

 private:
  // Connects with options_ (any server of the list) and hands the connection to the link; false
  // when none took it (said once). The keeper thread's.
  bool connect();
  // The keeper thread: connects, and again every kRetry while that fails or after libnats gives
  // a connection up.
  void keep_connected();
  std::string url_list() const;
  std::string server() const;  // the URL connected to; empty while not connected
  // FleetState: makes (or updates) the JetStream stream of the latest state on the current
  // connection; false (said once) when the cluster has no JetStream, or is not ready yet. The
  // keeper thread's.
  bool keep_fleet_state();
  void note(const std::string& what, bool trouble);  // says what changed (see troubled_)
  void set_options();
  void stop_keeper();

  const std::string name_;
  const NatsSettings settings_;
  const int64_t route_timeout_;
  std::shared_ptr<NatsDrive> drive_;
  std::unique_ptr<HandshakeGuard> guard_;  // ends a handshake libnats would never give up
  std::unique_ptr<FabricLink> link_;       // the worker's
  __natsOptions* options_ = nullptr;
  __natsConnection* connection_ = nullptr;  // the keeper's: made by it, used by the link
  __natsConnection* abandoned_ = nullptr;   // the keeper's: made as the endpoint stopped, never used
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
