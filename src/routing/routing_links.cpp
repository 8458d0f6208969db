// Routing's links and groups as they come and go, its contexts, pins and statistics: the rare
// changes, each under the lock (routing.cpp decides, without one).
#include <algorithm>
#include <stdexcept>

#include "routing/routing.hpp"

namespace mavswitch::routing {

Routing::Routing() { contexts_.push_back(std::make_unique<RoutingContext>()); }

Routing::~Routing() {
  // relaxed: destruction; no other thread can hold it any more.
  for (auto& chunk : chunks_) delete[] chunk.load(std::memory_order_relaxed);
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

void Routing::set_dedup_period(Millis period) {
  if (period > 0)
    dedup_.emplace(period);
  else
    dedup_.reset();
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
