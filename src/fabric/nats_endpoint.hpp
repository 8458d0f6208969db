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
// The endpoint keeps the connection from its loop: connecting (and keeping FleetState's
// JetStream stream) are jobs on the blocking-work thread (nats_session.hpp), one at a time,
// given again by a timer while the cluster refuses; libnats itself moves to another server of
// the list when one goes. The router makes it through nats_maker(), like any endpoint: started,
// reported, reloaded and closed on its worker.
#pragma once

#include <memory>
#include <string>

#include "config/config.hpp"
#include "fabric/fabric_link.hpp"
#include "fabric/nats_session.hpp"
#include "transport/endpoint.hpp"
#include "transport/event_loop.hpp"

struct __natsConnection;

namespace mavswitch::fabric {

class NatsDrive;

// What makes [NatsEndpoint] sections' endpoints (EndpointSpec::maker). `signing`: the section's
// (null: no key). `route_timeout`: the router's (a system published within it is local:
// fabric_link.hpp).
std::shared_ptr<const transport::EndpointMaker> nats_maker(const config::NatsSettings& settings,
                                                           std::shared_ptr<const routing::SigningPolicy> signing,
                                                           int64_t route_timeout);

class NatsEndpoint final : public transport::Endpoint {
 public:
  NatsEndpoint(transport::EndpointSpec spec, transport::LinkHost& host, const config::NatsSettings& settings,
               std::shared_ptr<const routing::SigningPolicy> signing, int64_t route_timeout);
  // On the worker's thread (or once its loop stopped): a job under way ends at once (its
  // handshake cut), and the connection closes. Nothing waits for libnats' callbacks: they find
  // the session, which outlives them.
  ~NatsEndpoint() override;

  // Brings the link up and connects; a cluster not reachable yet (or refusing the credentials)
  // is one error line and retried in the background. Throws std::runtime_error for settings
  // that cannot work (a credentials file that does not load).
  void start() override;
  void for_each_link(const std::function<void(const transport::Link&)>& f) const override;
  // "nats NAME URLS prefix P: connected to URL, N reconnects[, vehicles v1=11 v2=12]"
  std::string describe() const override;

 private:
  // Everything below is the worker's thread's.
  void connect_in(int64_t delay_ms);  // a connect job then, unless one is under way or due
  void give_job(bool connect);        // connect (and keep FleetState), or keep FleetState only
  void job_done(const NatsSession::Outcome& outcome);
  void closed();     // libnats gave a connection up
  void arm_guard();  // a handshake began: the guard looks every kLook while it lasts
  int64_t retry_delay() const;

  const config::NatsSettings settings_;
  const std::shared_ptr<const routing::SigningPolicy> signing_;
  const int64_t route_timeout_;
  std::shared_ptr<NatsSession> session_;
  std::shared_ptr<NatsDrive> drive_;
  std::unique_ptr<FabricLink> link_;
  __natsConnection* connection_ = nullptr;  // the link's
  transport::EventLoop::TimerId retry_timer_ = 0, guard_timer_ = 0;
  bool job_under_way_ = false;
};

}  // namespace mavswitch::fabric
