#include "routing/routing.hpp"

#include <algorithm>

namespace mavswitch::routing {
namespace {

constexpr uint32_t kSystemTimeId = 2;      // SYSTEM_TIME (common.xml)
constexpr uint32_t kSetupSigningId = 256;  // SETUP_SIGNING (common.xml)
constexpr int kSystemTimeBootMsOffset = 8;  // uint32 time_boot_ms after uint64 time_unix_usec

}  // namespace

LinkId Routing::add_link(LinkPolicy policy) {
  LinkId id = 0;
  while (id < links_.size() && links_[id].active) ++id;
  if (id == links_.size()) links_.emplace_back();
  links_[id] = Link{std::move(policy), true, 0, {}};
  if (links_[id].policy.group >= 0) groups_[static_cast<size_t>(links_[id].policy.group)].push_back(id);
  return id;
}

void Routing::remove_link(LinkId link) {
  if (!active(link)) return;
  Link& l = links_[link];
  if (l.policy.group >= 0) {
    auto& members = groups_[static_cast<size_t>(l.policy.group)];
    members.erase(std::remove(members.begin(), members.end(), link), members.end());
  }
  l.active = false;
  table_.forget_link(link);
  std::erase_if(pinned_, [&](const Pinned& p) { return p.link == link; });
}

int Routing::group_index(const std::string& name) {
  auto it = std::find(group_names_.begin(), group_names_.end(), name);
  if (it != group_names_.end()) return static_cast<int>(it - group_names_.begin());
  group_names_.push_back(name);
  groups_.emplace_back();
  return static_cast<int>(group_names_.size() - 1);
}

void Routing::set_dedup_period(Millis period) {
  if (period > 0) dedup_.emplace(period); else dedup_.reset();
}

void Routing::learn(LinkId from, uint8_t sysid, uint8_t compid, Millis now) {
  const int group = links_[from].policy.group;
  if (group < 0) {
    table_.learn(sysid, compid, from, now);
    return;
  }
  for (LinkId member : groups_[static_cast<size_t>(group)]) table_.learn(sysid, compid, member, now);
}

void Routing::check_reboot(const protocol::FrameView& f) {
  uint32_t boot_ms = 0;
  for (int k = 0; k < 4; ++k) boot_ms |= static_cast<uint32_t>(f.payload_byte(kSystemTimeBootMsOffset + k)) << (8 * k);
  const uint8_t sys = f.sysid();
  if (boot_known_[sys] && boot_ms < boot_ms_[sys]) {
    table_.forget_system(sys);
    ++stats_.reboots;
  }
  boot_ms_[sys] = boot_ms;
  boot_known_[sys] = true;
}

// Hands the frame to `to` unless it is the source link, was already given this frame, or
// its out-filter or unknown-id policy refuses it.
bool Routing::offer(LinkId to, LinkId from, const protocol::FrameView& f, DeliverFn& deliver) {
  Link& l = links_[to];
  if (to == from || !l.active || l.mark == stamp_) return false;
  l.mark = stamp_;
  if (!f.verified() && l.policy.drop_unknown_ids) return false;
  if (!l.policy.out.pass(f.msgid(), f.sysid(), f.compid())) {
    ++l.stats.filtered_out;
    ++stats_.filtered_out;
    return false;
  }
  deliver(to);
  ++stats_.deliveries;
  return true;
}

Verdict Routing::route(LinkId from, const protocol::FrameView& f, Millis now, DeliverFn deliver) {
  ++stats_.frames;
  Link& src = links_[from];
  const uint8_t sys = f.sysid();
  const uint8_t comp = f.compid();
  if (src.policy.signing && src.policy.signing->policy().verify &&
      src.policy.signing->check(f, signing_now_) != SignatureGate::Result::kAccept) {
    ++stats_.signing_rejected;
    ++src.stats.signing_rejected;
    return Verdict::kSigningRejected;
  }
  if (f.msgid() == kSetupSigningId) {  // the secret key in clear: it stops at the first hop
    ++stats_.setup_signing_dropped;
    return Verdict::kSetupSigning;
  }
  if (!src.policy.in.pass(f.msgid(), sys, comp)) {
    ++stats_.filtered_in;
    ++src.stats.filtered_in;
    return Verdict::kFilteredIn;
  }
  if (!f.verified() && src.policy.drop_unknown_ids) {
    ++stats_.unknown_ids_dropped;
    return Verdict::kUnknownIdDropped;
  }
  if (dedup_ && dedup_->seen_recently(f.bytes(), now)) {
    ++stats_.duplicates;
    return Verdict::kDuplicate;
  }
  if (f.verified() && f.msgid() == kSystemTimeId) check_reboot(f);
  if (sys != 0) learn(from, sys, comp, now);

  ++stamp_;
  if (stamp_ == 0) {  // wrapped: clear the marks so none matches by accident
    for (auto& l : links_) l.mark = 0;
    stamp_ = 1;
  }

  const protocol::MessageInfo* info = f.info();
  const uint8_t target_sys = info ? f.payload_byte(info->target_system_offset) : 0;
  const uint8_t target_comp = info ? f.payload_byte(info->target_component_offset) : 0;
  bool delivered = false;

  if (target_sys == 0) {
    ++stats_.broadcast;
    if (!f.verified()) ++stats_.unknown_ids_forwarded;
    for (LinkId to = 0; to < links_.size(); ++to) {
      if (!links_[to].active || table_.heard_on(sys, comp, to)) continue;  // no loops
      delivered |= offer(to, from, f, deliver);
    }
  } else {
    ++stats_.targeted;
    const auto& exact = target_comp != 0 ? table_.component_links(target_sys, target_comp) : table_.system_links(target_sys);
    const auto& targets = exact.empty() ? table_.system_links(target_sys) : exact;
    if (targets.empty()) {
      ++stats_.unknown_target;
      ++links_[from].stats.unknown_target;
      if (sniffer_sysid_ == 0) return Verdict::kUnknownTarget;
    }
    for (const auto& e : targets) delivered |= offer(e.link, from, f, deliver);
  }
  if (sniffer_sysid_ != 0) {
    for (const auto& e : table_.system_links(sniffer_sysid_)) delivered |= offer(e.link, from, f, deliver);
  }
  return delivered ? Verdict::kDelivered : Verdict::kNoDestination;
}

void Routing::expire(Millis now) {
  if (route_timeout_ > 0) stats_.routes_expired += table_.expire(now - route_timeout_);
  for (const auto& p : pinned_) table_.learn(p.sysid, p.compid, p.link, now);
}

void Routing::pin(LinkId link, uint8_t sysid, uint8_t compid, Millis now) {
  pinned_.push_back({link, sysid, compid});
  learn(link, sysid, compid, now);
}

}  // namespace mavswitch::routing
