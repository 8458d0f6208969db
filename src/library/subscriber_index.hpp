// Subscribers indexed by (source system | any) × (message id | all): matching a frame costs at
// most four hash lookups (one per kind of key in use) whatever the number of subscribers.
// Immutable once built; a change builds a new index (copy on write), so a dispatch in progress
// keeps using the one it started with.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "library/frame_queues.hpp"
#include "library/subscription.hpp"
#include "protocol/frame.hpp"

namespace mavswitch::library_detail {

struct Subscriber {
  uint64_t id = 0;
  MessageFilter filter;
  // Exactly one of these three is set.
  std::function<void(const protocol::FrameView&)> raw;
  std::function<void(const void* decoded, const protocol::FrameView&)> typed;
  std::shared_ptr<FrameQueue> queue;
  void (*decode)(std::span<const uint8_t> payload, void* out) = nullptr;  // with typed
  bool alive = true;  // router thread only: false once unsubscribed, even mid-dispatch
};

class SubscriberIndex {
 public:
  SubscriberIndex with(std::shared_ptr<Subscriber> s) const;
  SubscriberIndex without(uint64_t id) const;
  std::shared_ptr<Subscriber> find(uint64_t id) const;
  size_t size() const noexcept { return all_.size(); }
  // False when no subscriber can want a message of this id: a bit test, so that a frame nobody
  // asked for costs no lookup (most of a vehicle's telemetry, for the router's own component).
  bool may_want(uint32_t msgid) const noexcept {
    return (kinds_ & kAllKinds) != 0 || (ids_[(msgid >> 6) & (kIdWords - 1)] >> (msgid & 63) & 1) != 0;
  }

  // Subscribers for (sysid, msgid): exact, any system, all messages, then everything; within
  // each, in the order they subscribed. A kind nobody subscribed with costs no lookup.
  template <class F>
  void for_each_candidate(uint8_t sysid, uint32_t msgid, F&& f) const {
    if (kinds_ == 0) return;
    const uint64_t keys[4] = {key_of(sysid, msgid), key_of(kAnySystem, msgid), key_of(sysid, kAllMessages),
                              key_of(kAnySystem, kAllMessages)};
    for (unsigned kind = 0; kind < 4; ++kind) {
      if (!(kinds_ & (1u << kind))) continue;
      if (const Bucket* b = bucket(keys[kind])) {
        for (uint32_t k = b->begin; k < b->end; ++k) f(*ordered_[k]);
      }
    }
  }

 private:
  static constexpr uint32_t kAnySystem = 256;
  static constexpr uint32_t kAllMessages = 1u << 24;
  static constexpr uint64_t kEmpty = ~uint64_t{0};          // no key is all ones
  static constexpr unsigned kAllKinds = 1u << 2 | 1u << 3;  // kinds that take every message
  static constexpr size_t kIdWords = 16;                    // ids_: 1,024 bits, by id modulo 1,024
  static uint64_t key_of(uint32_t sys, uint32_t msg) { return (uint64_t{sys} << 32) | msg; }
  static uint64_t key_of(const MessageFilter& f) {
    return key_of(f.source_system ? *f.source_system : kAnySystem, f.message_id ? *f.message_id : kAllMessages);
  }
  static unsigned kind_of(uint64_t key) {
    return ((key >> 32) == kAnySystem ? 1u : 0u) | ((key & 0xFFFFFFFFu) == kAllMessages ? 2u : 0u);
  }

  // Open addressing in a power-of-two table, at most half full: a lookup is a multiply, a
  // shift and usually one probe.
  struct Bucket {
    uint64_t key = kEmpty;
    uint32_t begin = 0, end = 0;  // the key's subscribers: ordered_[begin, end)
  };
  const Bucket* bucket(uint64_t key) const noexcept {
    for (size_t i = slot_of(key);; i = (i + 1) & (table_.size() - 1)) {
      if (table_[i].key == key) return &table_[i];
      if (table_[i].key == kEmpty) return nullptr;
    }
  }
  size_t slot_of(uint64_t key) const noexcept { return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_); }
  static SubscriberIndex built_from(std::vector<std::shared_ptr<Subscriber>> all);

  std::vector<std::shared_ptr<Subscriber>> all_;  // in the order they subscribed
  std::vector<Subscriber*> ordered_;              // grouped by key, each group in that order
  std::vector<Bucket> table_;
  unsigned shift_ = 64;
  unsigned kinds_ = 0;           // bit kind_of(key) set when some subscriber has a key of that kind
  uint64_t ids_[kIdWords] = {};  // bit (id modulo 1,024) set when some subscriber names that id
};

}  // namespace mavswitch::library_detail
