// The fleet fabric as one link of the router: a transport::Link on the worker its endpoint was
// placed on, parsed, counted, filtered, signed and shaped as every link is. Its connection is
// driven from that worker's loop (nats_poller.hpp): a frame routed to it is published into the
// connection's buffer at once and goes out with the iteration's others in one write (flush).
// What a read brings is parsed and routed at once. No thread of its own, no hand-over per frame.
//
// Interest: the first frame it publishes from a system subscribes it to PREFIX.to.SYS.> (see
// fabric_subjects.hpp), so targeted frames reach the routers their targets live behind. Loss:
// gaps in the sequence numbers of what arrives count what the fabric lost, by each source's
// pace across an outage (paced_sequences()).
//
// Loops: NATS' no-echo holds for one connection only. A node that stalls and resumes delivers
// what the router published on its old connection to its new one, and a frame may come back
// through another router's links. So every message names its router in its reply subject
// (PREFIX.origin.ID, ID random per link, kept across reconnects: no allocation per frame, where a
// header would cost several), and a message naming this router is dropped. A frame from a system
// this router published within the route timeout is dropped too: a system heard locally is never
// learned from the fabric. Both are counted (looped_in). A message is one frame, as routers
// publish them; of one that holds more, the first frame's system decides.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "transport/endpoint.hpp"
#include "transport/link.hpp"

struct __natsConnection;
struct __natsSubscription;

namespace mavswitch::daemon {

class FabricLink final : public transport::Link {
 public:
  // Everything below is the worker's thread's. `route_timeout`: the router's (0: routes never
  // age out). `flush_connection`: writes what libnats holds for the connection.
  FabricLink(transport::Endpoint& endpoint, transport::LinkHost& host, const NatsSettings& settings,
             int64_t route_timeout, std::function<void()> flush_connection);
  ~FabricLink() override;

  // Publishes on and reads from `connection` from now on (null: none, and frames routed to it
  // are dropped as link_down), subscribed to Subscribe and to every system's interest learned so
  // far. Returns the connection it used before, its subscriptions gone, for the caller to close.
  __natsConnection* use(__natsConnection* connection);
  // Routes what the last read left in the subscriptions; returns how many messages that was.
  size_t drain();
  // The connection is up (again: libnats reconnected, or the keeper made another).
  void connected();
  // libnats has bytes to write (a subscription, a ping): written when the iteration ends.
  void write_soon();

  void flush() override;
  size_t queued_bytes() const noexcept override;

 private:
  // NATS delivers a message once per subscription it matches, so each is routed only by the
  // first subscription that matches it: a later one skips what an earlier one that intersects it
  // also matches (Subscribe = from.> and from.*.*.HEARTBEAT, or to.> and a system's interest).
  struct Subscription {
    __natsSubscription* handle;
    std::string pattern;
    std::vector<size_t> earlier_intersecting;  // indices into subscriptions_
  };

  bool enqueue(std::span<const uint8_t> frame) override;
  void subscribe(const std::string& subject);
  bool delivered_earlier(const Subscription& sub, const char* subject) const;
  void received_message(std::span<const uint8_t> message, const char* origin);

  const NatsSettings& settings_;
  const int64_t local_for_;  // a system published within this long is local (route timeout)
  const std::function<void()> flush_connection_;
  __natsConnection* connection_ = nullptr;
  std::vector<Subscription> subscriptions_;
  // When it last published a frame of each system (the systems behind it: its interest, asked
  // for on every connection); a frame of one of these is local, not the fabric's, until the
  // route timeout has passed without one.
  std::array<int64_t, 256> published_at_{};
  std::string origin_;   // PREFIX.origin.ID: the reply subject of everything it publishes
  std::string subject_;  // the subject being published on; its storage reused
};

}  // namespace mavswitch::daemon
