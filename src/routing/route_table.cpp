#include "routing/route_table.hpp"

#include <algorithm>

namespace mavswitch::routing {

RouteTable::~RouteTable() {
  // relaxed: destruction; no other thread can hold it any more.
  for (auto& sys : systems_) delete sys.load(std::memory_order_relaxed);
}

void RouteTable::learn(uint8_t sysid, uint8_t compid, LinkId link, Millis now) {
  const uint64_t key = key_of(link);
  if (const Component* c = component(sysid, compid)) {
    if (const Entry* e = c->links.find(key)) {
      touch(*e, now);
      return;
    }
  }
  std::lock_guard lock(write_mutex_);
  // relaxed: the writers' own read, under their lock; readers load it acquire.
  System* sys = systems_[sysid].load(std::memory_order_relaxed);
  if (sys == nullptr) {
    sys = new System;
    systems_[sysid].store(sys, std::memory_order_release);
  }
  Component* c = sys->by_compid[compid].load(std::memory_order_relaxed);
  if (c == nullptr) {
    c = new Component;
    ComponentRef& ref = sys->components.claim();
    ref.component = c;
    ref.key.store(uint64_t{compid} + 1, std::memory_order_release);
    sys->by_compid[compid].store(c, std::memory_order_release);
  }
  if (Entry* e = c->links.find(key)) {  // another worker learnt it meanwhile
    // relaxed: a time stamp compared with a timeout; a stale one delays a decision by a frame at most.
    e->last_heard.store(now, std::memory_order_relaxed);
    return;
  }
  Entry& e = c->links.claim();
  e.last_heard.store(now, std::memory_order_relaxed);
  e.learned.store(++learned_, std::memory_order_relaxed);  // published with the key (release)
  e.key.store(key, std::memory_order_release);
}

LinkId RouteTable::home_link(uint8_t sysid, uint8_t compid) const noexcept {
  LinkId home = kNoLink;
  uint64_t first = UINT64_MAX;
  if (const Component* c = component(sysid, compid)) {
    c->links.for_each([&](const Entry& e, uint64_t key) {
      // relaxed: written before the entry's key was published; for_each loads keys acquire.
      const uint64_t learned = e.learned.load(std::memory_order_relaxed);
      if (learned < first) first = learned, home = link_of(key);
    });
  }
  return home;
}

bool RouteTable::heard_on(uint8_t sysid, uint8_t compid, LinkId link) const noexcept {
  const Component* c = component(sysid, compid);
  return c != nullptr && c->links.find(key_of(link)) != nullptr;
}

bool RouteTable::knows(uint8_t sysid, uint8_t compid) const noexcept {
  bool found = false;
  for_each_component_link(sysid, compid, [&](LinkId) { found = true; });
  return found;
}

size_t RouteTable::known_count() const noexcept {
  size_t n = 0;
  for (unsigned sysid = 0; sysid < systems_.size(); ++sysid) {
    const System* sys = system(static_cast<uint8_t>(sysid));
    if (sys == nullptr) continue;
    sys->components.for_each([&](const ComponentRef& ref, uint64_t) {
      bool heard = false;
      ref.component->links.for_each([&](const Entry&, uint64_t) { heard = true; });
      n += heard ? 1 : 0;
    });
  }
  return n;
}

template <class Pred>
size_t RouteTable::erase_if(Pred pred) {
  size_t dropped = 0;
  for (uint32_t sysid = 0; sysid < systems_.size(); ++sysid) {
    // relaxed: the writers' own read, under their lock; readers load it acquire.
    System* sys = systems_[sysid].load(std::memory_order_relaxed);
    if (sys == nullptr) continue;
    for (auto& slot : sys->by_compid) {
      Component* c = slot.load(std::memory_order_relaxed);
      if (c == nullptr) continue;
      c->links.for_each([&](Entry& e, uint64_t key) {
        if (pred(static_cast<uint8_t>(sysid), e, link_of(key))) {
          e.key.store(0, std::memory_order_release);
          ++dropped;
        }
      });
    }
  }
  return dropped;
}

void RouteTable::forget_link(LinkId link) {
  std::lock_guard lock(write_mutex_);
  erase_if([&](uint8_t, const Entry&, LinkId l) { return l == link; });
}

void RouteTable::forget_component(uint8_t sysid, uint8_t compid) {
  std::lock_guard lock(write_mutex_);
  // relaxed: the writers' own read, under their lock; readers load it acquire.
  System* sys = systems_[sysid].load(std::memory_order_relaxed);
  Component* c = sys != nullptr ? sys->by_compid[compid].load(std::memory_order_relaxed) : nullptr;
  if (c != nullptr) c->links.for_each([](Entry& e, uint64_t) { e.key.store(0, std::memory_order_release); });
}

bool RouteTable::clock_went_back(uint8_t sysid, uint8_t compid, uint32_t boot_ms) noexcept {
  const Component* c = component(sysid, compid);
  if (c == nullptr) return false;
  const uint64_t now = boot_ms | uint64_t{1} << 32;  // known
  // relaxed: the boot time alone; the exchange is atomic on its own and publishes nothing.
  const uint64_t before = c->boot_ms.exchange(now, std::memory_order_relaxed);
  return before != 0 && now < before;
}

Millis RouteTable::last_heard(uint8_t sysid, uint8_t compid) const noexcept {
  Millis last = 0;
  if (const Component* c = component(sysid, compid))
    c->links.for_each(
        // relaxed: a time stamp compared with a timeout; a stale one delays a decision by a frame at most.
        [&](const Entry& e, uint64_t) { last = std::max(last, e.last_heard.load(std::memory_order_relaxed)); });
  return last;
}

size_t RouteTable::expire(Millis cutoff) {
  std::lock_guard lock(write_mutex_);
  return erase_if(
      // relaxed: the writers' own read, under their lock; readers load it acquire.
      [&](uint8_t, const Entry& e, LinkId) { return e.last_heard.load(std::memory_order_relaxed) < cutoff; });
}

}  // namespace mavswitch::routing
