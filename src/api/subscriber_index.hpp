// Subscribers indexed by (source system | any) × (message id | all): matching a frame costs
// four hash lookups whatever the number of subscribers. Immutable once built; a change builds
// a new index (copy on write), so a dispatch in progress keeps using the one it started with.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "api/frame_queues.hpp"
#include "api/subscription.hpp"
#include "protocol/frame.hpp"

namespace mavswitch::api_detail {

struct Subscriber {
  uint64_t id = 0;
  MessageFilter filter;
  // Exactly one of these three is set.
  std::function<void(const protocol::FrameView&)> raw;
  std::function<void(const void* decoded, const protocol::FrameView&)> typed;
  std::shared_ptr<SpscFrameQueue> queue;
  void (*decode)(std::span<const uint8_t> payload, void* out) = nullptr;  // with typed
  bool alive = true;  // router thread only: false once unsubscribed, even mid-dispatch
};

class SubscriberIndex {
 public:
  SubscriberIndex with(std::shared_ptr<Subscriber> s) const;
  SubscriberIndex without(uint64_t id) const;
  std::shared_ptr<Subscriber> find(uint64_t id) const;
  size_t size() const noexcept { return count_; }

  template <class F>
  void for_each_candidate(uint8_t sysid, uint32_t msgid, F&& f) const {
    if (count_ == 0) return;
    for (const uint64_t key : {key_of(sysid, msgid), key_of(kAnySystem, msgid), key_of(sysid, kAllMessages),
                               key_of(kAnySystem, kAllMessages)}) {
      auto it = buckets_.find(key);
      if (it == buckets_.end()) continue;
      for (const auto& s : it->second) f(*s);
    }
  }

 private:
  static constexpr uint32_t kAnySystem = 256;
  static constexpr uint32_t kAllMessages = 1u << 24;
  static uint64_t key_of(uint32_t sys, uint32_t msg) { return (uint64_t{sys} << 32) | msg; }
  static uint64_t key_of(const MessageFilter& f) {
    return key_of(f.source_system ? *f.source_system : kAnySystem, f.message_id ? *f.message_id : kAllMessages);
  }

  std::unordered_map<uint64_t, std::vector<std::shared_ptr<Subscriber>>> buckets_;
  size_t count_ = 0;
};

}  // namespace mavswitch::api_detail
