// The fleet fabric as one link of the router: a transport::Link on the worker its endpoint was
// placed on, parsed, counted, filtered, signed and shaped as every link is. Its connection is
// driven from that worker's loop (nats_poller.hpp): a frame routed to it is published into the
// connection's buffer at once and goes out with the iteration's others in one write (flush).
// What a read brings is parsed and routed at once. No thread of its own, no hand-over per frame.
//
// Interest: the first frame it publishes from a system subscribes it to PREFIX.to.SYS.> (see
// fabric_subjects.hpp), so targeted frames reach the routers their targets live behind. Loss:
// each router numbers what it publishes on from-subjects (origins.hpp); a receiver that takes
// them all counts the numbers that never came (lost_on_fabric). MAVLink sequence gaps are not
// read here: a sending router may thin a stream (a rate wish), and that is no loss.
//
// Loops: NATS' no-echo holds for one connection only. A node that stalls and resumes delivers
// what the router published on its old connection to its new one, and a frame may come back
// through another router's links. So every message names its router in its reply subject
// (PREFIX.origin.ID, ID random per link, kept across reconnects: no allocation per frame, where a
// header would cost several), and a message naming this router is dropped. A frame from a system
// this router published within the route timeout is dropped too: a system heard locally is never
// learned from the fabric. Both are counted (looped_in). A message is one frame, as routers
// publish them; of one that holds more, the first frame's system decides.
//
// Vehicles (vehicle_map.hpp): a router that serves a named vehicle publishes under PREFIX.NAME
// and asks for its own vehicle's to-subjects. A ground router that takes vehicles subscribes to
// each one's from-subjects (and to-subjects for the systems behind it; a pattern's vehicles are
// found by their heartbeats first) and renumbers: the source system of a frame from a vehicle
// (its own id there, e.g. 1) becomes its id here (12), and the target system of a frame to 12
// becomes 1, on the subjects of that vehicle. One byte each, the checksum corrected; a signed
// frame is checked and signed again with the link's key, keeping its link id and timestamp, and
// a vehicle that signs where this link has no key is refused (an error line). What does not map
// (a vehicle not taken, no id left, another system of a vehicle) is dropped and counted
// (unmapped).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/log.hpp"
#include "config/config.hpp"
#include "fabric/origins.hpp"
#include "fabric/vehicle_map.hpp"
#include "routing/signing_policy.hpp"
#include "transport/endpoint.hpp"
#include "transport/link.hpp"

struct __natsConnection;
struct __natsSubscription;

namespace mavswitch::fabric {

class FabricLink final : public transport::Link {
 public:
  // Everything below is the worker's thread's but numbering(). `route_timeout`: the router's
  // (0: routes never age out). `signing`: the endpoint's (null: it has no key).
  // `flush_connection`: writes what libnats holds for the connection.
  FabricLink(transport::Endpoint& endpoint, transport::LinkHost& host, const config::NatsSettings& settings,
             std::shared_ptr<const routing::SigningPolicy> signing, int64_t route_timeout,
             std::function<void()> flush_connection);
  ~FabricLink() override;

  // Publishes on and reads from `connection` from now on (null: none, and frames routed to it
  // are dropped as link_down), subscribed to Subscribe and to every system's interest learned so
  // far. Returns the connection it used before, its subscriptions gone, for the caller to close.
  __natsConnection* use(__natsConnection* connection);
  // Routes what the last read left in the subscriptions; returns how many messages that was.
  size_t drain();
  // libnats has bytes to write (a subscription, a ping): written when the iteration ends.
  void write_soon();

  void flush() override;
  size_t queued_bytes() const noexcept override;
  // The vehicles taken and their ids here ("v1=11 v2=12"); empty without Vehicles. Any thread.
  std::string numbering() const;

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
  // `complete`: it came by a subscription to all of some router's frames (a pattern ending
  // from.>), so a gap in that router's count is a loss.
  void received_message(std::span<const uint8_t> message, const char* subject, const char* origin, bool complete);
  // Another router's count on what it published to from-subjects (its origin's ".N"): false for
  // a message that came after a newer one of that router (stale: dropped); gaps counted lost.
  bool in_order(std::string_view origin, uint64_t count, bool complete);
  // Vehicles: the frame a message from a vehicle holds, renumbered (in edited_); empty when it
  // is dropped (counted).
  std::span<const uint8_t> from_vehicle(std::span<const uint8_t> message, std::string_view name,
                                        std::string_view origin);
  // Publishes a frame for vehicle `v`, renumbered; false when it waits (a full buffer).
  bool publish_to_vehicle(const protocol::FrameView& frame, VehicleMap::Vehicle& v);
  // `edited` (a signed frame renumbered) signed again with the link's key, with the link id and
  // timestamp it carried (the order of its stream stays its signer's).
  std::span<const uint8_t> sign_again(std::span<uint8_t> edited);
  bool publish(const char* subject, std::span<const uint8_t> bytes, bool counted = false);
  void taken(const VehicleMap::Vehicle& v);  // newly numbered: said, and subscribed to
  void subscribe_vehicle(const VehicleMap::Vehicle& v);
  void subscribe_interest(uint8_t system);
  bool published(uint8_t system) const noexcept { return published_at_[system] != kNeverPublished; }
  static constexpr int64_t kNeverPublished = INT64_MIN;

  const config::NatsSettings& settings_;
  const std::shared_ptr<const routing::SigningPolicy> signing_;
  const std::string root_;   // of what it publishes: PREFIX, or PREFIX.VEHICLE
  const int64_t local_for_;  // a system published within this long is local (route timeout)
  const std::function<void()> flush_connection_;
  __natsConnection* connection_ = nullptr;
  std::vector<Subscription> subscriptions_;
  // When it last published a frame of each system (the systems behind it: its interest, asked
  // for on every connection); a frame of one of these is local, not the fabric's, until the
  // route timeout has passed without one.
  std::array<int64_t, 256> published_at_{};
  std::string origin_;           // PREFIX.origin.ID: the reply subject of everything it publishes
  std::string reply_;            // origin_.N: what a from-subject's message carries; storage reused
  bool own_named_ = false;       // Vehicle = NAME: its autopilot's system is named (fleet_names)
  uint64_t published_from_ = 0;  // messages it published to from-subjects: their count, N
  // Other routers' counts, by origin (at most kMaxOrigins): the last seen, and whether it was
  // seen whole (by a from.> subscription), which makes its gaps losses.
  struct Count {
    uint64_t last = 0;
    bool complete = false;
  };
  static constexpr size_t kMaxOrigins = 1024;
  struct OriginHash {
    using is_transparent = void;  // found by a string_view: no allocation per message
    size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, Count, OriginHash, std::equal_to<>> counts_;
  std::string subject_;                    // the subject being published on; its storage reused
  std::unique_ptr<VehicleMap> vehicles_;   // Vehicles: the vehicles it takes; null: none
  std::array<bool, 256> heard_unnamed_{};  // Vehicles: systems the fabric brought without a name
  std::array<uint8_t, protocol::kMaxFrameLen> edited_{}, signed_{};
  mutable std::mutex numbering_mutex_;
  std::string numbering_;  // vehicles_->summary(), for numbering()

  // Vehicle = NAME: another router sending as NAME (its heartbeats on ROOT.from, another origin).
  // The later of the two yields: it neither publishes nor takes commands for NAME until the
  // other is silent VehicleTimeout, so a command for the vehicle reaches one autopilot. The
  // earlier says the conflict and goes on (the ground refuses the other's frames: VehicleMap).
  void rival_heard(std::string_view origin);
  bool yielding();        // and ends a yield whose rival went silent
  std::string own_from_;  // ROOT.from.: where its own name's frames are published
  std::string rival_;     // the other router's origin ("" : none heard)
  int64_t rival_heard_at_ = 0;
  bool yielding_ = false;
  log::Throttle rival_lines_;
  log::Throttle heard_lines_;  // a vehicle heard: each time it is numbered, which a publisher can make often
};

}  // namespace mavswitch::fabric
