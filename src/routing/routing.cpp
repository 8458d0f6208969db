#include "routing/routing.hpp"

#include <algorithm>
#include <functional>
#include <stdexcept>

namespace mavswitch::routing {
namespace {

constexpr uint32_t kSystemTimeId = 2;       // SYSTEM_TIME (common.xml)
constexpr uint32_t kSetupSigningId = 256;   // SETUP_SIGNING (common.xml)
constexpr int kSystemTimeBootMsOffset = 8;  // uint32 time_boot_ms after uint64 time_unix_usec

}  // namespace

Routing::Routing() { contexts_.push_back(std::make_unique<RoutingContext>()); }

Routing::~Routing() {
  // relaxed: destruction; no other thread can hold it any more.
  for (auto& chunk : chunks_) delete[] chunk.load(std::memory_order_relaxed);
}

const char* verdict_name(Verdict v) noexcept {
  switch (v) {
    case Verdict::kDelivered: return "delivered";
    case Verdict::kNoDestination: return "no destination";
    case Verdict::kFilteredIn: return "dropped: filter-in";
    case Verdict::kDuplicate: return "dropped: duplicate";
    case Verdict::kUnknownTarget: return "dropped: unknown-target";
    case Verdict::kUnknownIdDropped: return "dropped: unknown-id";
    case Verdict::kSigningRejected: return "dropped: signing";
    case Verdict::kSetupSigning: return "dropped: SETUP_SIGNING is never forwarded";
    case Verdict::kCommandDenied: return "dropped: a command from a link that may not command";
  }
  return "?";
}

RoutingContext& Routing::add_context() {
  contexts_.push_back(std::make_unique<RoutingContext>());
  return *contexts_.back();
}

LinkId Routing::add_link(std::shared_ptr<const LinkPolicy> policy, FunctionRef<void(LinkId)> before_routable) {
  std::lock_guard lock(mutex_);
  if (std::find(policies_.begin(), policies_.end(), policy) == policies_.end()) policies_.push_back(policy);
  LinkId id;
  if (!free_ids_.empty()) {
    std::pop_heap(free_ids_.begin(), free_ids_.end(), std::greater<>{});
    id = free_ids_.back();
    free_ids_.pop_back();
  } else {
    // relaxed: the writers' own read, under their lock; readers load it acquire.
    id = link_count_.load(std::memory_order_relaxed);
    if ((id >> kChunkBits) >= kMaxChunks) throw std::length_error("too many links");
    auto& chunk = chunks_[id >> kChunkBits];
    if (chunk.load(std::memory_order_relaxed) == nullptr)
      chunk.store(new LinkSlot[kChunkSize], std::memory_order_release);
  }
  LinkSlot& s = slot(id);
  s.stats = {};
  before_routable(id);  // published with the policy and traits below (release)
  s.policy.store(policy.get(), std::memory_order_release);
  s.traits.store(static_cast<uint8_t>(kActive | (policy->out.empty() ? 0 : kFiltersOut) |
                                      (policy->drop_unknown_ids ? kDropsUnknownIds : 0) |
                                      (policy->in.empty() ? 0 : kFiltersIn) | (policy->group >= 0 ? kGrouped : 0) |
                                      (policy->signing && policy->signing->policy().verify ? kVerifiesSigning : 0) |
                                      (policy->signing && policy->signing->policy().sign ? kSignsOut : 0) |
                                      (policy->deny_commands ? kDeniesCommands : 0)),
                 std::memory_order_release);
  // relaxed: the writers' own read, under their lock; readers load it acquire.
  if (id >= link_count_.load(std::memory_order_relaxed)) link_count_.store(id + 1, std::memory_order_release);
  if (policy->group >= 0) {
    auto& member = groups_[static_cast<size_t>(policy->group)]->members().claim();
    member.priority.store(policy->priority, std::memory_order_relaxed);
    member.last_heard.store(-1, std::memory_order_relaxed);
    member.key.store(uint64_t{id} + 1, std::memory_order_release);
    s.member.store(&member, std::memory_order_release);
  }
  return id;
}

void Routing::remove_link(LinkId link) {
  std::lock_guard lock(mutex_);  // then the table's writers' lock: always in this order
  if (!active(link)) return;
  LinkSlot& s = slot(link);
  // relaxed: the writers' own read, under their lock; readers load it acquire.
  const int group = s.policy.load(std::memory_order_relaxed)->group;
  if (group >= 0) {
    groups_[static_cast<size_t>(group)]->members().for_each([&](GroupMember& m, uint64_t key) {
      if (key == uint64_t{link} + 1) m.key.store(0, std::memory_order_release);
    });
  }
  s.member.store(nullptr, std::memory_order_release);
  s.traits.store(0, std::memory_order_release);
  s.policy.store(nullptr, std::memory_order_release);
  std::erase_if(pinned_, [&](const Pinned& p) { return p.link == link; });
  // Its routes go before its id can be handed out again, or a new link could inherit them.
  table_.forget_link(link);
  free_ids_.push_back(link);
  std::push_heap(free_ids_.begin(), free_ids_.end(), std::greater<>{});
}

int Routing::find_group(const std::string& name) const {
  auto it = std::find_if(groups_.begin(), groups_.end(), [&](const auto& g) { return g->name() == name; });
  return it == groups_.end() ? -1 : static_cast<int>(it - groups_.begin());
}

int Routing::group_index(const std::string& name) {
  auto it = std::find_if(groups_.begin(), groups_.end(), [&](const auto& g) { return g->name() == name; });
  if (it != groups_.end()) return static_cast<int>(it - groups_.begin());
  groups_.push_back(std::make_unique<LinkGroup>(name, timing_.dedup_window));
  return static_cast<int>(groups_.size() - 1);
}

std::vector<Routing::GroupStats> Routing::group_stats() const {
  std::vector<GroupStats> out;
  for (const auto& g : groups_) out.push_back({g->name(), g->stats()});
  return out;
}

// Whether a frame for grouped link `to` goes out on it: only on the group's active member
// (on every member when none is healthy). Chosen once per decision and group.
bool Routing::group_sends_on(RoutingContext& ctx, const LinkSlot& l, LinkId to) {
  const LinkPolicy* p = l.policy.load(std::memory_order_acquire);
  if (p == nullptr || p->group < 0) return true;
  const auto g = static_cast<size_t>(p->group);
  if (ctx.group_choice_.size() <= g) ctx.group_choice_.resize(groups_.size(), {0, kNoLink});
  auto& [stamp, chosen] = ctx.group_choice_[g];
  if (stamp != ctx.stamp_) {
    stamp = ctx.stamp_;
    chosen = groups_[g]->active(ctx.now_, timing_, [&](LinkId before, LinkId after) {
      if (on_switch_) on_switch_(groups_[g]->name(), before, after);
    });
  }
  return chosen == kNoLink || chosen == to;
}

void Routing::set_dedup_period(Millis period) {
  if (period > 0)
    dedup_.emplace(period);
  else
    dedup_.reset();
}

void Routing::learn(LinkId from, uint8_t sysid, uint8_t compid, Millis now) {
  // relaxed: traits are stored before the link is published (release), and a frame from the link comes after that.
  if (!(slot(from).traits.load(std::memory_order_relaxed) & kGrouped)) {
    table_.learn(sysid, compid, from, now);
    return;
  }
  const int group = policy(from).group;
  groups_[static_cast<size_t>(group)]->members().for_each(
      [&](const GroupMember&, uint64_t key) { table_.learn(sysid, compid, static_cast<LinkId>(key - 1), now); });
}

// Only the component whose clock went back rebooted: a camera on its own link keeps its route.
void Routing::check_reboot(const protocol::FrameView& f) {
  uint32_t boot_ms = 0;
  for (int k = 0; k < 4; ++k) boot_ms |= static_cast<uint32_t>(f.payload_byte(kSystemTimeBootMsOffset + k)) << (8 * k);
  if (table_.clock_went_back(f.sysid(), f.compid(), boot_ms)) {
    table_.forget_component(f.sysid(), f.compid());
    reboots_.add_shared();
  }
}

// Hands the frame to `to` (whose slot is `l`) unless it is the source link, was already given
// this frame, or its out-filter or unknown-id policy refuses it. Inlined into each loop of
// route(): it runs once per candidate destination.
[[gnu::always_inline]] inline bool Routing::offer(RoutingContext& ctx, LinkSlot& l, LinkId to, LinkId from,
                                                  const protocol::FrameView& f, DeliverFn& deliver) {
  if (to == from || ctx.marks_[to] == ctx.stamp_) return false;
  ctx.marks_[to] = ctx.stamp_;
  const uint8_t traits = l.traits.load(std::memory_order_acquire);
  if (traits == 0) return false;  // not active
  if (traits & kOutChecks) [[unlikely]] {
    if (!passes_out(ctx, l, traits, to, f)) return false;
  }
  deliver(to);
  return true;
}

// What a link with out-filters, an unknown-id policy or a group asks of a frame before it gets it.
bool Routing::passes_out(RoutingContext& ctx, LinkSlot& l, uint8_t traits, LinkId to, const protocol::FrameView& f) {
  if ((traits & kGrouped) && !group_sends_on(ctx, l, to)) return false;
  if ((traits & kDropsUnknownIds) && !f.verified()) return false;
  if (traits & kFiltersOut) {
    const LinkPolicy* p = l.policy.load(std::memory_order_acquire);
    if (p != nullptr && !p->out.pass(f.msgid(), f.sysid(), f.compid())) {
      l.stats.filtered_out.add_shared();
      ++ctx.stats_.filtered_out;
      return false;
    }
  }
  return true;
}

// The source link's own checks, for a link that has any (signing, in-filters, an unknown-id
// policy, a group), in the order they apply; kDelivered when the frame passes them all.
Verdict Routing::check_source(RoutingContext& ctx, LinkSlot& src, uint8_t src_traits, const protocol::FrameView& f,
                              Millis now) {
  auto& stats = ctx.stats_;
  if (src_traits & kVerifiesSigning) {
    if (src.policy.load(std::memory_order_acquire)->signing->check(f, ctx.signing_now_) !=
        SignatureGate::Result::kAccept) {
      ++stats.signing_rejected;
      src.stats.signing_rejected.add_shared();
      return Verdict::kSigningRejected;
    }
  }
  if (f.msgid() == kSetupSigningId) {
    ++stats.setup_signing_dropped;
    return Verdict::kSetupSigning;
  }
  if ((src_traits & kDeniesCommands) && is_command(f.msgid())) {
    ++stats.commands_denied;
    src.stats.commands_denied.add_shared();
    return Verdict::kCommandDenied;
  }
  if ((src_traits & kFiltersIn) &&
      !src.policy.load(std::memory_order_acquire)->in.pass(f.msgid(), f.sysid(), f.compid())) {
    ++stats.filtered_in;
    src.stats.filtered_in.add_shared();
    return Verdict::kFilteredIn;
  }
  if (!f.verified() && (src_traits & kDropsUnknownIds)) {
    ++stats.unknown_ids_dropped;
    return Verdict::kUnknownIdDropped;
  }
  if (src_traits & kGrouped) {  // the same frame through two links of one vehicle: once
    GroupMember* member = src.member.load(std::memory_order_acquire);
    const LinkPolicy* p = src.policy.load(std::memory_order_acquire);
    if (member != nullptr && !groups_[static_cast<size_t>(p->group)]->heard(*member, f, now, timing_)) {
      ++stats.duplicates;
      return Verdict::kDuplicate;
    }
  }
  return Verdict::kDelivered;
}

// A link id found in the route table may be newer than the marks (added since route() sized
// them): such a link was not active when the decision started, so it is skipped.
bool Routing::offer_known(RoutingContext& ctx, LinkId to, LinkId from, const protocol::FrameView& f,
                          DeliverFn& deliver) {
  return to < ctx.marks_.size() && offer(ctx, slot(to), to, from, f, deliver);
}

Verdict Routing::route(RoutingContext& ctx, LinkId from, const protocol::FrameView& f, Millis now, DeliverFn deliver) {
  auto& stats = ctx.stats_;
  ++stats.frames;
  ctx.now_ = now;
  LinkSlot& src = slot(from);
  // The source link's traits say which of its policy's checks apply: most links have none, and
  // then the policy is not read at all.
  const uint8_t src_traits = src.traits.load(std::memory_order_acquire);
  const uint8_t sys = f.sysid();
  const uint8_t comp = f.compid();
  if (src_traits & kSourceChecks) [[unlikely]] {
    if (const Verdict v = check_source(ctx, src, src_traits, f, now); v != Verdict::kDelivered) return v;
  } else if (f.msgid() == kSetupSigningId) {  // the secret key in clear: it stops at the first hop
    ++stats.setup_signing_dropped;
    return Verdict::kSetupSigning;
  }
  if (dedup_ && dedup_->seen_recently(f.bytes(), now)) {
    ++stats.duplicates;
    return Verdict::kDuplicate;
  }
  if (f.verified() && f.msgid() == kSystemTimeId) check_reboot(f);

  const LinkId count = link_count();
  if (ctx.marks_.size() < count) ctx.marks_.resize((count + kChunkSize - 1) & ~(kChunkSize - 1), 0);
  ++ctx.stamp_;
  if (ctx.stamp_ == 0) {  // wrapped: clear the marks so none matches by accident
    std::fill(ctx.marks_.begin(), ctx.marks_.end(), 0);
    for (auto& choice : ctx.group_choice_) choice.first = 0;
    ctx.stamp_ = 1;
  }

  const protocol::MessageInfo* info = f.info();
  const uint8_t target_sys = info ? f.payload_byte(info->target_system_offset) : 0;
  const uint8_t target_comp = info ? f.payload_byte(info->target_component_offset) : 0;
  uint32_t delivered = 0;

  if (target_sys == 0) {
    ++stats.broadcast;
    if (!f.verified()) ++stats.unknown_ids_forwarded;
    // No loops: the links where the source itself lives are marked as given already. Found
    // in the same walk that learns the source, unless the link's group learns it elsewhere too.
    auto mark = [&](LinkId l) {
      if (l < ctx.marks_.size()) ctx.marks_[l] = ctx.stamp_;
    };
    if (sys != 0 && !(src_traits & kGrouped)) {
      table_.learn(sys, comp, from, now, mark);
    } else {
      if (sys != 0) learn(from, sys, comp, now);
      table_.for_each_component_link(sys, comp, mark);
    }
    for (LinkId base = 0; base < count; base += kChunkSize) {  // one chunk pointer per 256 links
      LinkSlot* chunk = chunks_[base >> kChunkBits].load(std::memory_order_acquire);
      const LinkId n = std::min<LinkId>(count - base, kChunkSize);
      for (LinkId k = 0; k < n; ++k) delivered += offer(ctx, chunk[k], base + k, from, f, deliver);
    }
  } else {
    ++stats.targeted;
    if (sys != 0) learn(from, sys, comp, now);
    const bool exact = target_comp != 0 && table_.knows(target_sys, target_comp);
    bool any = false;
    auto to_link = [&](LinkId l) {
      any = true;
      delivered += offer_known(ctx, l, from, f, deliver);
    };
    if (exact) {
      table_.for_each_component_link(target_sys, target_comp, to_link);
    } else {
      table_.for_each_system_link(target_sys, to_link);
    }
    if (!any) {
      ++stats.unknown_target;
      src.stats.unknown_target.add_shared();
      if (sniffer_sysid_ == 0) return Verdict::kUnknownTarget;
    }
  }
  if (sniffer_sysid_ != 0) {
    table_.for_each_system_link(sniffer_sysid_, [&](LinkId l) { delivered += offer_known(ctx, l, from, f, deliver); });
  }
  stats.deliveries += delivered;
  return delivered != 0 ? Verdict::kDelivered : Verdict::kNoDestination;
}

void Routing::expire(Millis now) {
  if (route_timeout_ > 0) routes_expired_.add_shared(table_.expire(now - route_timeout_));
  std::lock_guard lock(mutex_);
  for (const auto& p : pinned_) table_.learn(p.sysid, p.compid, p.link, now);
}

void Routing::pin(LinkId link, uint8_t sysid, uint8_t compid, Millis now) {
  {
    std::lock_guard lock(mutex_);
    pinned_.push_back({link, sysid, compid});
  }
  learn(link, sysid, compid, now);
}

RoutingStats Routing::stats() const {
  RoutingStats sum;
  for (const auto& c : contexts_) sum += c->stats_;
  sum.reboots += reboots_;
  sum.routes_expired += routes_expired_;
  return sum;
}

LinkRoutingStats Routing::link_stats(LinkId link) const noexcept {
  const auto& s = slot(link).stats;
  return {s.filtered_in, s.unknown_target, s.signing_rejected, s.commands_denied, s.filtered_out};
}

}  // namespace mavswitch::routing
