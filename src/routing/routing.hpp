// The MAVLink routing rules, in one place:
//  - every frame teaches the route table where its source (system, component) lives;
//  - target_system 0, or no target field: broadcast to every other link, except links where
//    the frame's own source lives (that would loop it back);
//  - otherwise: the links where the target component was heard, else where the target system
//    was heard; an unknown target is dropped and counted, never flooded;
//  - never back to the link it came from; filters in and out per link; groups share what they
//    learn; sniffer links get everything; duplicates within a period are dropped;
//  - unknown message ids go out as broadcast unless a link's policy drops them;
//  - a system whose SYSTEM_TIME.time_boot_ms goes backwards rebooted: its routes are cleared.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/frame.hpp"
#include "protocol/function_ref.hpp"
#include "routing/dedup.hpp"
#include "routing/filter.hpp"
#include "routing/route_table.hpp"
#include "routing/signing_policy.hpp"
#include "routing/types.hpp"

namespace mavswitch::routing {

struct LinkPolicy {
  Filter in;                    // applied to frames arriving on the link
  Filter out;                   // applied to frames leaving on the link
  int group = -1;               // links of one group share learned routes (-1: none)
  bool drop_unknown_ids = false;  // neither accept nor send frames of unknown message ids
  // MAVLink 2 signing: shared by the links of one endpoint (null: no signing on this link).
  std::shared_ptr<SignatureGate> signing;
};

enum class Verdict : uint8_t {
  kDelivered,          // to at least one link
  kNoDestination,      // broadcast or known target, but every candidate was excluded
  kFilteredIn,         // the source link's in-filter refused it
  kDuplicate,
  kUnknownTarget,      // addressed to a system never heard (or aged out)
  kUnknownIdDropped,   // unknown message id on a link whose policy drops them
  kSigningRejected,    // unsigned, badly signed, replayed, or MAVLink 1 on a verifying link
  kSetupSigning,       // SETUP_SIGNING carries a secret key: never forwarded
};

struct RoutingStats {
  uint64_t frames = 0;
  uint64_t broadcast = 0;
  uint64_t targeted = 0;
  uint64_t deliveries = 0;  // frame copies handed to links
  uint64_t filtered_in = 0;
  uint64_t filtered_out = 0;
  uint64_t duplicates = 0;
  uint64_t unknown_target = 0;
  uint64_t unknown_ids_forwarded = 0;
  uint64_t unknown_ids_dropped = 0;
  uint64_t reboots = 0;
  uint64_t signing_rejected = 0;
  uint64_t setup_signing_dropped = 0;
  uint64_t routes_expired = 0;
};

// Drops by cause for one link: the first three for frames that came in on it, the last for
// frames that would have gone out on it.
struct LinkRoutingStats {
  uint64_t filtered_in = 0;
  uint64_t unknown_target = 0;
  uint64_t signing_rejected = 0;
  uint64_t filtered_out = 0;
};

using DeliverFn = FunctionRef<void(LinkId)>;

class Routing {
 public:
  // Adds a link (its id is the smallest free one) or removes it, with every route through it.
  LinkId add_link(LinkPolicy policy);
  void remove_link(LinkId link);
  bool active(LinkId link) const noexcept { return link < links_.size() && links_[link].active; }
  const LinkPolicy& policy(LinkId link) const { return links_[link].policy; }

  // Groups are named in the configuration; a name maps to one group index.
  int group_index(const std::string& name);

  void set_sniffer_sysid(uint8_t sysid) noexcept { sniffer_sysid_ = sysid; }
  void set_dedup_period(Millis period);  // 0 turns de-duplication off
  void set_route_timeout(Millis timeout) noexcept { route_timeout_ = timeout; }  // 0: never

  // Decides where `frame`, which arrived on `from` at `now`, goes; calls deliver once per
  // destination link. Never allocates except to learn a new route.
  Verdict route(LinkId from, const protocol::FrameView& frame, Millis now, DeliverFn deliver);
  // The signing clock route() checks freshness against (10 µs since 2015); the caller sets it,
  // so decisions stay a function of their inputs.
  void set_signing_now(uint64_t now) noexcept { signing_now_ = now; }

  // Ages out silent routes; call about once a second.
  void expire(Millis now);
  // A component that lives on `link` for as long as the link does (an in-process component):
  // learned now and never aged out.
  void pin(LinkId link, uint8_t sysid, uint8_t compid, Millis now);

  const RouteTable& routes() const noexcept { return table_; }
  const RoutingStats& stats() const noexcept { return stats_; }
  const LinkRoutingStats& link_stats(LinkId link) const noexcept { return links_[link].stats; }
  // Frames the out-filter kept from this link.
  uint64_t filtered_out(LinkId link) const noexcept { return links_[link].stats.filtered_out; }

 private:
  struct Link {
    LinkPolicy policy;
    bool active = false;
    uint32_t mark = 0;  // == stamp_ when already delivered the current frame
    LinkRoutingStats stats;
  };

  void learn(LinkId from, uint8_t sysid, uint8_t compid, Millis now);
  void check_reboot(const protocol::FrameView& frame);
  bool offer(LinkId to, LinkId from, const protocol::FrameView& frame, DeliverFn& deliver);

  std::vector<Link> links_;
  std::vector<std::vector<LinkId>> groups_;
  std::vector<std::string> group_names_;
  RouteTable table_;
  std::optional<Deduplicator> dedup_;
  RoutingStats stats_;
  Millis route_timeout_ = 10'000;
  uint32_t stamp_ = 0;
  uint64_t signing_now_ = 0;
  uint8_t sniffer_sysid_ = 0;
  std::array<uint32_t, 256> boot_ms_{};   // last SYSTEM_TIME.time_boot_ms per system
  std::array<bool, 256> boot_known_{};
  struct Pinned {
    LinkId link;
    uint8_t sysid, compid;
  };
  std::vector<Pinned> pinned_;
};

}  // namespace mavswitch::routing
