// Links that reach the same vehicle (Group = radio): they share what they learn, and traffic to
// the vehicle goes out on one of them only, the best healthy one. A member is healthy while it
// has heard something within the failover timeout; the active member keeps the traffic while it
// is healthy, and one of better priority (lower Priority) takes it back only once it has been
// healthy for the failback delay, so a link that flickers does not pull traffic back and forth.
// When no member is healthy, nothing is known: every member is tried.
//
// What arrives over several members reaches each destination once: frames are de-duplicated by
// (system, component, sequence, message id, CRC) within a short window.
//
// Read by every I/O worker without locks (members are atomics); a switch is one compare-and-
// swap, counted once. The de-duplication takes the group's lock: two copies of a frame routed
// by two workers at the same moment must not both pass, and a vehicle's links carry hundreds of
// frames a second, not the hundreds of thousands the lock-free table elsewhere is for. What it chose not to build:
// health per vehicle behind one link (a group is one vehicle's links), or link quality from RADIO_STATUS.
#pragma once

#include <atomic>
#include <climits>
#include <cstdint>
#include <mutex>
#include <string>

#include "protocol/frame.hpp"
#include "routing/counter.hpp"
#include "routing/dedup.hpp"
#include "routing/slot_list.hpp"
#include "routing/types.hpp"

namespace mavswitch::routing {

struct GroupMember {
  std::atomic<uint64_t> key{0};  // link + 1; 0: free
  std::atomic<int> priority{0};
  std::atomic<Millis> last_heard{-1};     // -1: never
  std::atomic<Millis> healthy_since{-1};  // the first frame after a silence
};

struct FailoverTiming {
  Millis timeout = 1500;   // FailoverTimeout: silent this long, a member is not healthy
  Millis failback = 5000;  // FailbackDelay: healthy this long before it takes traffic back
  Millis dedup_window = 500;
};

class LinkGroup {
 public:
  LinkGroup(std::string name, Millis dedup_window) : name_(std::move(name)), dedup_(dedup_window) {}

  const std::string& name() const noexcept { return name_; }
  SlotList<GroupMember>& members() noexcept { return members_; }
  const SlotList<GroupMember>& members() const noexcept { return members_; }

  // A frame arrived on `member` at `now`: it is healthy. False when the same frame already
  // came in through another member (or this one) within the window: drop it.
  bool heard(GroupMember& member, const protocol::FrameView& frame, Millis now, const FailoverTiming& timing) noexcept;
  // The member traffic goes out on at `now`, kNoLink when none is healthy (then: all). A change
  // of a healthy active member is a failover (or a failback): `switched` is told, once.
  template <class F>
  LinkId active(Millis now, const FailoverTiming& timing, F&& switched);

  struct Stats {
    LinkId active;
    uint64_t failovers;
    uint64_t duplicates;
  };
  // relaxed: a link id read for statistics.
  Stats stats() const noexcept { return {active_.load(std::memory_order_relaxed), failovers_, duplicates_}; }

 private:
  std::string name_;
  SlotList<GroupMember> members_;
  std::atomic<LinkId> active_{kNoLink};
  Counter failovers_;
  Counter duplicates_;
  std::mutex dedup_mutex_;
  Deduplicator dedup_;  // under dedup_mutex_
};

template <class F>
LinkId LinkGroup::active(Millis now, const FailoverTiming& timing, F&& switched) {
  const LinkId current = active_.load(std::memory_order_acquire);
  int current_priority = INT_MAX;
  bool current_healthy = false;
  LinkId best = kNoLink, best_settled = kNoLink;
  int best_priority = INT_MAX, settled_priority = INT_MAX;
  members_.for_each([&](const GroupMember& m, uint64_t key) {
    const auto link = static_cast<LinkId>(key - 1);
    // relaxed: a time stamp compared with a timeout; a stale one delays a decision by a frame at most.
    const Millis heard = m.last_heard.load(std::memory_order_relaxed);
    if (heard < 0 || now - heard > timing.timeout) return;
    const int priority = m.priority.load(std::memory_order_relaxed);
    if (link == current) {
      current_healthy = true;
      current_priority = priority;
    }
    if (priority < best_priority || (priority == best_priority && link < best)) {
      best = link;
      best_priority = priority;
    }
    // relaxed: a time stamp compared with a timeout; a stale one delays a decision by a frame at most.
    const bool settled = now - m.healthy_since.load(std::memory_order_relaxed) >= timing.failback;
    if (settled && (priority < settled_priority || (priority == settled_priority && link < best_settled))) {
      best_settled = link;
      settled_priority = priority;
    }
  });
  LinkId chosen = best;
  if (current_healthy) chosen = settled_priority < current_priority ? best_settled : current;
  if (chosen == current) return current;
  LinkId expected = current;
  if (active_.compare_exchange_strong(expected, chosen, std::memory_order_acq_rel) && current != kNoLink &&
      chosen != kNoLink) {
    failovers_.add_shared();
    switched(current, chosen);
  }
  return chosen;
}

}  // namespace mavswitch::routing
