// The fleet fabric as one link of the router, living on the router's thread (nats_poller.hpp
// drives its connection there). A frame routed to it is published into the connection's buffer
// at once, and goes out with the iteration's others in one write when the iteration ends. What a
// read brings is parsed and routed at once. No thread of its own, no hand-over per frame.
//
// Interest: the first frame it publishes from a system subscribes it to PREFIX.to.SYS.> (see
// fabric_subjects.hpp), so targeted frames reach the routers their targets live behind. Loss:
// gaps in the sequence numbers of what arrives, per source, count the frames the fabric lost
// (a node that died with them, say).
//
// Loops: NATS' no-echo holds for one connection only. A node that stalls and resumes delivers
// what the router published on its old connection to its new one, and a frame may come back
// through another router's links. So every message names its router in its reply subject
// (PREFIX.origin.ID, ID random per link, kept across reconnects: no allocation per frame, where a
// header would cost several), and a message naming this router is dropped. A frame from a system
// this router published within the route timeout is dropped too: a system heard locally is never
// learned from the fabric. Both are counted (looped_in).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "protocol/parser.hpp"
#include "router/local_link.hpp"
#include "router/router.hpp"
#include "routing/sequence_tracker.hpp"
#include "transport/link.hpp"

struct __natsConnection;
struct __natsSubscription;

namespace mavswitch::daemon {

class FabricLink final : public LocalLink {
 public:
  // Everything below is the router's thread's (or any thread's while the router does not run).
  FabricLink(Router& router, const NatsSettings& settings);
  ~FabricLink();
  FabricLink(const FabricLink&) = delete;
  FabricLink& operator=(const FabricLink&) = delete;

  void attach(std::shared_ptr<const routing::LinkPolicy> policy);
  void detach();
  // Publishes on and reads from `connection` from now on (null: none, and frames routed to it
  // are dropped as link_down), subscribed to Subscribe and to every system's interest learned so
  // far. Returns the connection it used before, its subscriptions gone, for the caller to close.
  __natsConnection* use(__natsConnection* connection);
  // Routes what the last read left in the subscriptions; returns how many messages that was.
  size_t drain();
  // The connection is up (again: libnats reconnected, or the keeper made another): what a source
  // lost while it was down is counted by the source's pace (SequenceTracker::outage_ended).
  void connected();
  void deliver(const protocol::FrameView& frame, std::span<const uint8_t> bytes) override;

  struct Report {
    transport::LinkCounters counters;
    protocol::ParserStats parser;
    uint64_t sequence_lost = 0;  // frames missing from what arrived, by its sources' sequences
    size_t queued_bytes = 0;     // in the connection's buffer, not yet written (or kept while reconnecting)
  };
  Report report() const;

 private:
  // NATS delivers a message once per subscription it matches, so each is routed only by the
  // first subscription that matches it: a later one skips what an earlier one that intersects it
  // also matches (Subscribe = from.> and from.*.*.HEARTBEAT, or to.> and a system's interest).
  struct Subscription {
    __natsSubscription* handle;
    std::string pattern;
    std::vector<size_t> earlier_intersecting;  // indices into subscriptions_
  };

  void subscribe(const std::string& subject);
  bool delivered_earlier(const Subscription& sub, const char* subject) const;
  void received(std::span<const uint8_t> message, const char* origin);

  Router& router_;
  const NatsSettings& settings_;
  routing::LinkId id_ = routing::kNoLink;
  protocol::FrameParser parser_;
  routing::SequenceTracker sequences_;
  transport::LinkCounters counters_;
  __natsConnection* connection_ = nullptr;
  std::vector<Subscription> subscriptions_;
  // When it last published a frame of each system (the systems behind it: its interest, asked
  // for on every connection); a frame of one of these is local, not the fabric's, until the
  // route timeout has passed without one.
  std::array<routing::Millis, 256> published_at_{};
  std::string origin_;   // PREFIX.origin.ID: the reply subject of everything it publishes
  std::string subject_;  // the subject being published on; its storage reused
};

}  // namespace mavswitch::daemon
