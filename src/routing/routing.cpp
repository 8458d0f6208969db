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

// Whether a frame for grouped link `to` goes out on it: only on the group's active member (on
// every member when none is healthy), chosen once per decision and group. Never when it came in
// on a member of the same group: it would go back to the vehicle it came from, and choosing the
// active member then, while only the source has been heard, would pin traffic on it.
bool Routing::group_sends_on(RoutingContext& ctx, const LinkSlot& l, LinkId to, LinkId from) {
  const LinkPolicy* p = l.policy.load(std::memory_order_acquire);
  if (p == nullptr || p->group < 0) return true;
  const LinkPolicy* source = slot(from).policy.load(std::memory_order_acquire);
  if (source != nullptr && source->group == p->group) return false;
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

// Lists `to` (whose slot is `l`) as a destination unless it is the source link, was already
// given this frame, or its out-filter or unknown-id policy refuses it. Inlined into each loop
// of route(): it runs once per candidate destination.
[[gnu::always_inline]] inline void Routing::offer(RoutingContext& ctx, LinkSlot& l, LinkId to, LinkId from,
                                                  const protocol::FrameView& f) {
  if (to == from || ctx.marks_[to] == ctx.stamp_) return;
  ctx.marks_[to] = ctx.stamp_;
  const uint8_t traits = l.traits.load(std::memory_order_acquire);
  if (traits == 0) return;  // not active
  if (traits & kOutChecks) [[unlikely]] {
    if (!passes_out(ctx, l, traits, to, from, f)) return;
  }
  ctx.to_.push_back(to);  // within its reserved room: marked once, so at most one per link
}

// What a link with out-filters, an unknown-id policy or a group asks of a frame before it gets it.
bool Routing::passes_out(RoutingContext& ctx, LinkSlot& l, uint8_t traits, LinkId to, LinkId from,
                         const protocol::FrameView& f) {
  if ((traits & kGrouped) && !group_sends_on(ctx, l, to, from)) return false;
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
void Routing::offer_known(RoutingContext& ctx, LinkId to, LinkId from, const protocol::FrameView& f) {
  if (to < ctx.marks_.size()) offer(ctx, slot(to), to, from, f);
}

Verdict Routing::route(RoutingContext& ctx, LinkId from, const protocol::FrameView& f, Millis now) {
  auto& stats = ctx.stats_;
  ++stats.frames;
  ctx.to_.clear();
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
  if (ctx.marks_.size() < count) {
    ctx.marks_.resize((count + kChunkSize - 1) & ~(kChunkSize - 1), 0);
    ctx.to_.reserve(ctx.marks_.size());
  }
  ++ctx.stamp_;
  if (ctx.stamp_ == 0) {  // wrapped: clear the marks so none matches by accident
    std::fill(ctx.marks_.begin(), ctx.marks_.end(), 0);
    for (auto& choice : ctx.group_choice_) choice.first = 0;
    ctx.stamp_ = 1;
  }

  const protocol::MessageInfo* info = f.info();
  const uint8_t target_sys = info ? f.payload_byte(info->target_system_offset) : 0;
  const uint8_t target_comp = info ? f.payload_byte(info->target_component_offset) : 0;
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
      for (LinkId k = 0; k < n; ++k) offer(ctx, chunk[k], base + k, from, f);
    }
  } else {
    ++stats.targeted;
    if (sys != 0) learn(from, sys, comp, now);
    const bool exact = target_comp != 0 && table_.knows(target_sys, target_comp);
    bool any = false;
    auto to_link = [&](LinkId l) {
      any = true;
      offer_known(ctx, l, from, f);
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
    table_.for_each_system_link(sniffer_sysid_, [&](LinkId l) { offer_known(ctx, l, from, f); });
  }
  stats.deliveries += ctx.to_.size();
  return ctx.to_.empty() ? Verdict::kNoDestination : Verdict::kDelivered;
}

}  // namespace mavswitch::routing
