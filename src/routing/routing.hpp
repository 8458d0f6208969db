// The MAVLink routing rules, in one place:
//  - every frame teaches the route table where its source (system, component) lives;
//  - target_system 0, or no target field: broadcast to every other link, except links where
//    the frame's own source lives (that would loop it back);
//  - otherwise: the links where the target component was heard, else where the target system
//    was heard; an unknown target is dropped and counted, never flooded;
//  - never back to the link it came from; filters in and out per link; groups share what they
//    learn; sniffer links get everything; duplicates within a period are dropped;
//  - unknown message ids go out as broadcast unless a link's policy drops them;
//  - a component whose SYSTEM_TIME.time_boot_ms goes backwards rebooted: its routes are cleared
//    (only its own: the system's other components did not say they rebooted).
//
// One Routing is shared by every I/O worker. Decisions read it without locks: the route table
// and the link slots are atomics, and what changes per frame (delivery marks, counters) lives
// in the calling worker's RoutingContext. Adding or removing a link, a new route, expiry and
// the reboot rule take a lock; they are rare. So does a frame from a redundant group's link
// (routing/link_group.hpp), whose copies on two links must pass once.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "protocol/frame.hpp"
#include "protocol/function_ref.hpp"
#include "routing/counter.hpp"
#include "routing/dedup.hpp"
#include "routing/filter.hpp"
#include "routing/link_group.hpp"
#include "routing/route_table.hpp"
#include "routing/signing_policy.hpp"
#include "routing/slot_list.hpp"
#include "routing/types.hpp"

namespace mavswitch::routing {

struct LinkPolicy {
  Filter in;                      // applied to frames arriving on the link
  Filter out;                     // applied to frames leaving on the link
  int group = -1;                 // links of one group reach one vehicle: routing/link_group.hpp (-1: none)
  int priority = 0;               // in a group: lower is preferred
  bool drop_unknown_ids = false;  // neither accept nor send frames of unknown message ids
  // Commands = deny: frames that command a vehicle or change it (is_command()) coming in on this
  // link are dropped and counted; what the link hears is unchanged (a viewer).
  bool deny_commands = false;
  // MAVLink 2 signing: shared by the links of one endpoint (null: no signing on this link).
  std::shared_ptr<SignatureGate> signing;
};

enum class Verdict : uint8_t {
  kDelivered,      // to at least one link
  kNoDestination,  // broadcast or known target, but every candidate was excluded
  kFilteredIn,     // the source link's in-filter refused it
  kDuplicate,
  kUnknownTarget,     // addressed to a system never heard (or aged out)
  kUnknownIdDropped,  // unknown message id on a link whose policy drops them
  kSigningRejected,   // unsigned, badly signed, replayed, or MAVLink 1 on a verifying link
  kSetupSigning,      // SETUP_SIGNING carries a secret key: never forwarded
  kCommandDenied,     // a command from a link that may not command (Commands = deny)
};
// Whether a message commands a vehicle or changes what it holds: commands, modes, parameters,
// missions, files, logs erased, signing set up, manual control, targets.
bool is_command(uint32_t msgid) noexcept;
// "delivered", "unknown-target" ...: as the statistics name the drops.
const char* verdict_name(Verdict v) noexcept;

// Counters as a plain snapshot (T = uint64_t) or as they count (T = Counter).
template <class T>
struct BasicRoutingStats {
  T frames{};
  T broadcast{};
  T targeted{};
  T deliveries{};  // frame copies handed to links
  T filtered_in{};
  T filtered_out{};
  T duplicates{};
  T unknown_target{};
  T unknown_ids_forwarded{};
  T unknown_ids_dropped{};
  T reboots{};
  T signing_rejected{};
  T setup_signing_dropped{};
  T routes_expired{};
  T commands_denied{};

  template <class U>
  BasicRoutingStats& operator+=(const BasicRoutingStats<U>& o) {
    frames += o.frames, broadcast += o.broadcast, targeted += o.targeted, deliveries += o.deliveries;
    filtered_in += o.filtered_in, filtered_out += o.filtered_out, duplicates += o.duplicates;
    unknown_target += o.unknown_target, unknown_ids_forwarded += o.unknown_ids_forwarded;
    unknown_ids_dropped += o.unknown_ids_dropped, reboots += o.reboots, signing_rejected += o.signing_rejected;
    setup_signing_dropped += o.setup_signing_dropped, routes_expired += o.routes_expired;
    commands_denied += o.commands_denied;
    return *this;
  }
};
using RoutingStats = BasicRoutingStats<uint64_t>;

// Drops by cause for one link: the first three for frames that came in on it, the last for
// frames that would have gone out on it.
template <class T>
struct BasicLinkRoutingStats {
  T filtered_in{};
  T unknown_target{};
  T signing_rejected{};
  T commands_denied{};
  T filtered_out{};
};
using LinkRoutingStats = BasicLinkRoutingStats<uint64_t>;

// What one thread that routes frames keeps to itself: which links were given the current
// frame, its counters, and the signing clock its decisions are checked against.
class RoutingContext {
 public:
  // The signing clock route() checks freshness against (10 µs since 2015); the caller sets
  // it, so decisions stay a function of their inputs.
  void set_signing_now(uint64_t now) noexcept { signing_now_ = now; }
  // Where the last route() on this context sent its frame, in the order decided: the caller
  // delivers to each (routing calls nobody back). Valid until the next route() on it.
  std::span<const LinkId> destinations() const noexcept { return to_; }

 private:
  friend class Routing;
  std::vector<LinkId> to_;       // the destinations; as much room as marks_, so never grown mid-route
  std::vector<uint32_t> marks_;  // by link: == stamp_ when already given the current frame
  uint32_t stamp_ = 0;
  uint64_t signing_now_ = 0;
  Millis now_ = 0;
  std::vector<std::pair<uint32_t, LinkId>> group_choice_;  // by group: (stamp, member chosen then)
  BasicRoutingStats<Counter> stats_;
};

class Routing {
 public:
  Routing();
  ~Routing();
  Routing(const Routing&) = delete;
  Routing& operator=(const Routing&) = delete;

  // Adds a link (its id is the smallest free one) or removes it, with every route through it.
  // `before_routable` runs with the new id before any route() can deliver to it, so the caller
  // can record what it keeps of the link (where it lives) first. A policy passed by shared
  // pointer is kept (once) for the Routing's lifetime, so links sharing an endpoint's policy
  // cost nothing more; one passed by value is kept too.
  LinkId add_link(std::shared_ptr<const LinkPolicy> policy, FunctionRef<void(LinkId)> before_routable);
  LinkId add_link(std::shared_ptr<const LinkPolicy> policy) {
    return add_link(std::move(policy), [](LinkId) {});
  }
  LinkId add_link(LinkPolicy policy, FunctionRef<void(LinkId)> before_routable) {
    return add_link(std::make_shared<const LinkPolicy>(std::move(policy)), before_routable);
  }
  LinkId add_link(LinkPolicy policy) { return add_link(std::make_shared<const LinkPolicy>(std::move(policy))); }
  void remove_link(LinkId link);
  bool active(LinkId link) const noexcept {
    return link < link_count() && slot(link).policy.load(std::memory_order_acquire);
  }
  // Only for a link that is active, or was when the caller decided to use it.
  const LinkPolicy& policy(LinkId link) const { return *slot(link).policy.load(std::memory_order_acquire); }
  // The policy of a link, or null when it is not active (any thread).
  const LinkPolicy* find_policy(LinkId link) const noexcept {
    return link < link_count() ? slot(link).policy.load(std::memory_order_acquire) : nullptr;
  }
  // Whether frames to a link route() delivered to are signed on their way out.
  bool signs_out(LinkId link) const noexcept {
    return (slot(link).traits.load(std::memory_order_acquire) & kSignsOut) != 0;
  }
  // What the data path asks of a link per frame, from one byte (its policy is not read).
  bool verifies_signing(LinkId link) const noexcept { return has_trait(link, kVerifiesSigning); }
  bool denies_commands(LinkId link) const noexcept { return has_trait(link, kDeniesCommands); }
  // One more than the highest link id ever used.
  LinkId link_count() const noexcept { return link_count_.load(std::memory_order_acquire); }

  // Groups are named in the configuration; a name maps to one group index. Before routing,
  // after set_failover.
  // The group's index, or -1: groups are made before routing starts, so this is any thread's.
  int find_group(const std::string& name) const;
  int group_index(const std::string& name);
  void set_failover(const FailoverTiming& timing) noexcept { timing_ = timing; }
  // Told (on the routing thread) when a group's traffic moves from one healthy link to another.
  using SwitchFn = std::function<void(const std::string& group, LinkId from, LinkId to)>;
  void on_switch(SwitchFn f) { on_switch_ = std::move(f); }
  struct GroupStats {
    std::string name;
    LinkGroup::Stats stats;
  };
  std::vector<GroupStats> group_stats() const;

  void set_sniffer_sysid(uint8_t sysid) noexcept { sniffer_sysid_ = sysid; }
  void set_dedup_period(Millis period);  // 0 turns de-duplication off. Before routing.
  void set_route_timeout(Millis timeout) noexcept { route_timeout_ = timeout; }  // 0: never
  Millis route_timeout() const noexcept { return route_timeout_; }

  // A context for one more thread that routes frames. Before routing starts; it lives as long
  // as the Routing. Context 0 exists from the start, for single-threaded use.
  RoutingContext& add_context();
  RoutingContext& context(size_t index = 0) { return *contexts_[index]; }

  // Decides where `frame`, which arrived on `from` at `now`, goes: ctx.destinations(), each
  // link once. Never allocates except to learn a new route or a new link's mark.
  Verdict route(RoutingContext& ctx, LinkId from, const protocol::FrameView& frame, Millis now);
  // The same, then `each(link)` for every destination (context 0's, without one).
  template <class F>
  Verdict route(RoutingContext& ctx, LinkId from, const protocol::FrameView& frame, Millis now, F&& each) {
    const Verdict v = route(ctx, from, frame, now);
    for (const LinkId to : ctx.destinations()) each(to);
    return v;
  }
  template <class F>
  Verdict route(LinkId from, const protocol::FrameView& frame, Millis now, F&& each) {
    return route(*contexts_[0], from, frame, now, std::forward<F>(each));
  }
  void set_signing_now(uint64_t now) noexcept { contexts_[0]->set_signing_now(now); }

  // Ages out silent routes; call about once a second (any thread).
  void expire(Millis now);
  // A component that lives on `link` for as long as the link does (an in-process component):
  // learned now and never aged out.
  void pin(LinkId link, uint8_t sysid, uint8_t compid, Millis now);

  const RouteTable& routes() const noexcept { return table_; }
  // Sums over every context: a snapshot, any thread.
  RoutingStats stats() const;
  LinkRoutingStats link_stats(LinkId link) const noexcept;
  // Frames the out-filter kept from this link.
  uint64_t filtered_out(LinkId link) const noexcept { return slot(link).stats.filtered_out; }

 private:
  // What a decision needs of a link's policy, in one byte read per link: most links have no
  // filters, groups or signing, and then their policy is never read on the hot path.
  enum Traits : uint8_t {
    kActive = 1,
    kFiltersOut = 2,
    kDropsUnknownIds = 4,
    kFiltersIn = 8,
    kGrouped = 16,
    kVerifiesSigning = 32,
    kSignsOut = 64,
    kDeniesCommands = 128
  };
  // The traits that call for checks of a frame coming in on the link, and going out on it.
  static constexpr uint8_t kSourceChecks =
      kVerifiesSigning | kFiltersIn | kDropsUnknownIds | kGrouped | kDeniesCommands;
  static constexpr uint8_t kOutChecks = kGrouped | kDropsUnknownIds | kFiltersOut;
  bool has_trait(LinkId link, uint8_t trait) const noexcept {
    return link < link_count() && (slot(link).traits.load(std::memory_order_acquire) & trait);
  }
  struct LinkSlot {
    std::atomic<const LinkPolicy*> policy{nullptr};  // null: free
    std::atomic<uint8_t> traits{0};                  // 0: free
    std::atomic<GroupMember*> member{nullptr};       // in its group, when it has one
    BasicLinkRoutingStats<Counter> stats;
  };
  // Link slots live in chunks that never move, so readers need no lock while links come and go.
  static constexpr size_t kChunkBits = 8;
  static constexpr size_t kChunkSize = size_t{1} << kChunkBits;
  static constexpr size_t kMaxChunks = 4096;  // a million links
  LinkSlot& slot(LinkId link) const noexcept {
    return chunks_[link >> kChunkBits].load(std::memory_order_acquire)[link & (kChunkSize - 1)];
  }
  void learn(LinkId from, uint8_t sysid, uint8_t compid, Millis now);
  void check_reboot(const protocol::FrameView& frame);
  void offer(RoutingContext& ctx, LinkSlot& slot, LinkId to, LinkId from, const protocol::FrameView& frame);
  void offer_known(RoutingContext& ctx, LinkId to, LinkId from, const protocol::FrameView& frame);
  bool group_sends_on(RoutingContext& ctx, const LinkSlot& slot, LinkId to, LinkId from);
  [[gnu::noinline]] bool passes_out(RoutingContext& ctx, LinkSlot& slot, uint8_t traits, LinkId to, LinkId from,
                                    const protocol::FrameView& frame);
  [[gnu::noinline]] Verdict check_source(RoutingContext& ctx, LinkSlot& src, uint8_t src_traits,
                                         const protocol::FrameView& frame, Millis now);

  std::array<std::atomic<LinkSlot*>, kMaxChunks> chunks_{};
  std::atomic<LinkId> link_count_{0};
  std::vector<LinkId> free_ids_;                             // a min-heap, under mutex_
  std::vector<std::shared_ptr<const LinkPolicy>> policies_;  // every policy ever used, under mutex_
  std::vector<std::unique_ptr<LinkGroup>> groups_;
  FailoverTiming timing_;
  SwitchFn on_switch_;
  std::vector<std::unique_ptr<RoutingContext>> contexts_;
  RouteTable table_;
  std::optional<Deduplicator> dedup_;
  Counter reboots_;
  Counter routes_expired_;
  Millis route_timeout_ = 10'000;
  uint8_t sniffer_sysid_ = 0;
  struct Pinned {
    LinkId link;
    uint8_t sysid, compid;
  };
  std::vector<Pinned> pinned_;  // under mutex_
  std::mutex mutex_;            // serializes changes to links, groups and pins
};

}  // namespace mavswitch::routing
