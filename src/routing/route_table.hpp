// Which links each (system, component) was heard on, and when. Shared by every I/O worker:
// lookups never lock, and hearing a known source again is one relaxed store (skipped when the
// time has not changed). Only a new (system, component, link), expiry and forgetting take the
// writers' lock. Storage exists only for the systems and components actually heard (about 2 KB
// per system, 64 bytes per component), so an idle router holds almost nothing. Each component
// has its own list of links, found by index: a frame's decision walks the links its source (or
// target) component was heard on, however many other components its system has, so a peer
// that makes up hundreds of component ids does not slow the frames of the real ones.
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <span>

#include "routing/slot_list.hpp"
#include "routing/types.hpp"

namespace mavswitch::routing {

class RouteTable {
 public:
  RouteTable() = default;
  ~RouteTable();
  RouteTable(const RouteTable&) = delete;
  RouteTable& operator=(const RouteTable&) = delete;

  // Records that (sysid, compid) was heard on link at now. Locks only the first time this
  // component is heard on this link.
  void learn(uint8_t sysid, uint8_t compid, LinkId link, Millis now);
  // The same, and calls elsewhere(l) for each other link where this component was heard: one
  // walk for what a broadcast needs (not back to where its source lives) and for learning.
  template <class F>
  void learn(uint8_t sysid, uint8_t compid, LinkId link, Millis now, F&& elsewhere) {
    bool known = false;
    if (const Component* c = component(sysid, compid)) {
      c->links.for_each([&](const Entry& e, uint64_t key) {
        if (link_of(key) != link) {
          elsewhere(link_of(key));
        } else {
          known = true;
          touch(e, now);
        }
      });
    }
    if (!known) learn(sysid, compid, link, now);
  }

  // Calls f(link) for each link where this exact component was heard.
  template <class F>
  void for_each_component_link(uint8_t sysid, uint8_t compid, F&& f) const {
    if (const Component* c = component(sysid, compid))
      c->links.for_each([&](const Entry&, uint64_t key) { f(link_of(key)); });
  }
  // Calls f(link) for each link where any component of this system was heard (a link once per
  // component heard on it).
  template <class F>
  void for_each_system_link(uint8_t sysid, F&& f) const {
    if (const System* sys = system(sysid)) {
      sys->components.for_each([&](const ComponentRef& ref, uint64_t) {
        ref.component->links.for_each([&](const Entry&, uint64_t key) { f(link_of(key)); });
      });
    }
  }
  bool heard_on(uint8_t sysid, uint8_t compid, LinkId link) const noexcept;
  // Where this component lives: of the links it is heard on now, the one it was heard on first
  // (kNoLink when it is heard nowhere). A peer that later sends with its ids from another link
  // is heard there too, but never becomes its home while the first link still hears it.
  LinkId home_link(uint8_t sysid, uint8_t compid) const noexcept;
  bool knows(uint8_t sysid, uint8_t compid) const noexcept;
  // How many (system, component) pairs it knows: a walk over the systems heard and their
  // components, not over all 65,536 pairs (the window counts them once a second).
  size_t known_count() const noexcept;

  void forget_link(LinkId link);
  void forget_component(uint8_t sysid, uint8_t compid);
  // Records a component's SYSTEM_TIME.time_boot_ms; true when it went backwards (the component
  // rebooted). A component not yet heard has nowhere to keep it: its first SYSTEM_TIME only arms it.
  bool clock_went_back(uint8_t sysid, uint8_t compid, uint32_t boot_ms) noexcept;
  Millis last_heard(uint8_t sysid, uint8_t compid) const noexcept;
  // Drops every entry last heard before `cutoff`; returns how many went.
  size_t expire(Millis cutoff);

 private:
  struct Entry {
    std::atomic<uint64_t> key{0};               // link + 1; 0: free
    mutable std::atomic<Millis> last_heard{0};  // readers refresh it; the key is the writer's
    std::atomic<uint64_t> learned{0};           // the order it was learned in (home_link())
  };
  // Hearing a known source: no lock, and no store at all within the same millisecond, so
  // workers hearing many sources do not fight over cache lines.
  static void touch(const Entry& e, Millis now) noexcept {
    // relaxed: a time stamp compared with a timeout; a stale one delays a decision by a frame at most.
    if (e.last_heard.load(std::memory_order_relaxed) != now) e.last_heard.store(now, std::memory_order_relaxed);
  }
  // A component's links, allocated when the component is first heard. Two slots inline: most
  // components live on one link or two, and a peer inventing every component id of every
  // system should not cost a segment each.
  struct Component {
    SlotList<Entry, 2> links;
    mutable std::atomic<uint64_t> boot_ms{0};  // last SYSTEM_TIME.time_boot_ms | 1 << 32 once known
  };
  // A system's components in the order first heard, for walks over the whole system. A
  // component, once heard, stays (without links when they expire): at most 256 per system.
  struct ComponentRef {
    std::atomic<uint64_t> key{0};  // compid + 1, stored after `component` (release)
    const Component* component = nullptr;
  };
  struct System {
    System() = default;
    System(const System&) = delete;
    System& operator=(const System&) = delete;
    ~System() {
      // relaxed: destruction; no other thread can hold it any more.
      for (auto& c : by_compid) delete c.load(std::memory_order_relaxed);
    }
    std::array<std::atomic<Component*>, 256> by_compid{};
    SlotList<ComponentRef> components;
  };
  static uint64_t key_of(LinkId link) noexcept { return uint64_t{link} + 1; }
  static LinkId link_of(uint64_t key) noexcept { return static_cast<LinkId>(key - 1); }
  const System* system(uint8_t sysid) const noexcept { return systems_[sysid].load(std::memory_order_acquire); }
  const Component* component(uint8_t sysid, uint8_t compid) const noexcept {
    const System* sys = system(sysid);
    return sys != nullptr ? sys->by_compid[compid].load(std::memory_order_acquire) : nullptr;
  }
  template <class Pred>
  size_t erase_if(Pred pred);

  std::array<std::atomic<System*>, 256> systems_{};
  std::mutex write_mutex_;
  uint64_t learned_ = 0;  // under write_mutex_: entries learned so far
};

}  // namespace mavswitch::routing
