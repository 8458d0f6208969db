// A list that one writer at a time changes (under the owner's lock) while any number of threads
// read it without locks. It is a chain of fixed segments that only ever grows: a removed
// element leaves a free slot for the next insertion, and segments are freed only with the
// list, so a reader never touches freed memory. Memory is bounded by the most elements ever
// held at once.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>

namespace mavswitch::routing {

// Slot: a type with `std::atomic<uint64_t> key` (0: free); the rest of it is the owner's.
template <class Slot, size_t kPerSegment = 8>
class SlotList {
 public:
  SlotList() = default;
  SlotList(const SlotList&) = delete;
  SlotList& operator=(const SlotList&) = delete;
  ~SlotList() {
    // relaxed: destruction; no other thread can hold it any more.
    Segment* s = head_.next.load(std::memory_order_relaxed);
    while (s != nullptr) {
      Segment* next = s->next.load(std::memory_order_relaxed);
      delete s;
      s = next;
    }
  }

  // Calls f(slot, key) for every occupied slot. Any thread.
  // Only the slots a segment has ever used are read: a system with one component costs one
  // slot, not a segment's worth.
  template <class F>
  void for_each(F&& f) const {
    for (const Segment* s = &head_; s != nullptr; s = s->next.load(std::memory_order_acquire)) {
      const uint32_t used = s->used.load(std::memory_order_acquire);
      for (uint32_t i = 0; i < used; ++i) {
        const uint64_t key = s->slots[i].key.load(std::memory_order_acquire);
        if (key != 0) f(s->slots[i], key);
      }
    }
  }
  template <class F>
  void for_each(F&& f) {
    std::as_const(*this).for_each([&](const Slot& slot, uint64_t key) { f(const_cast<Slot&>(slot), key); });
  }

  // The slot holding key, or null. Any thread.
  Slot* find(uint64_t key) const {
    for (const Segment* s = &head_; s != nullptr; s = s->next.load(std::memory_order_acquire)) {
      const uint32_t used = s->used.load(std::memory_order_acquire);
      for (uint32_t i = 0; i < used; ++i) {
        if (s->slots[i].key.load(std::memory_order_acquire) == key) return const_cast<Slot*>(&s->slots[i]);
      }
    }
    return nullptr;
  }

  // A free slot, growing the chain when every slot is taken. The writer fills in the slot's
  // other fields, then publishes it by storing its key (release). Writer only.
  // A reader that read `used` before it grew misses the new slot, as if it had walked a
  // moment before the insertion.
  Slot& claim() {
    Segment* s = &head_;
    for (;;) {
      for (uint32_t i = 0; i < kPerSegment; ++i) {
        // relaxed: the writers' own read, under their lock; readers load it acquire.
        if (s->slots[i].key.load(std::memory_order_relaxed) != 0) continue;
        if (i >= s->used.load(std::memory_order_relaxed)) s->used.store(i + 1, std::memory_order_release);
        return s->slots[i];
      }
      Segment* next = s->next.load(std::memory_order_relaxed);
      if (next == nullptr) {
        next = new Segment;
        s->next.store(next, std::memory_order_release);
      }
      s = next;
    }
  }

 private:
  struct Segment {
    Slot slots[kPerSegment];
    std::atomic<uint32_t> used{0};  // slots [0, used) have been claimed at some time
    std::atomic<Segment*> next{nullptr};
  };
  Segment head_;
};

}  // namespace mavswitch::routing
