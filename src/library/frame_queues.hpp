// Bounded, lock-free queues of whole frames between threads. A full queue refuses the frame
// (the caller counts it); nothing blocks and nothing grows.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>

#include "protocol/frame.hpp"

namespace mavswitch {

// A frame owned by value (fixed size, no allocation).
struct OwnedFrame {
  uint16_t size = 0;
  uint8_t bytes[protocol::kMaxFrameLen];
  std::span<const uint8_t> span() const noexcept { return {bytes, size}; }
};

// Many producers, one consumer (Vyukov's bounded queue: a sequence number per slot).
class MpscFrameQueue {
 public:
  explicit MpscFrameQueue(size_t capacity);
  bool push(std::span<const uint8_t> frame) noexcept;  // any thread
  bool pop(OwnedFrame& out) noexcept;                  // the one consumer

 private:
  struct Slot {
    std::atomic<size_t> sequence;
    OwnedFrame frame;
  };
  std::unique_ptr<Slot[]> slots_;
  size_t mask_;
  alignas(64) std::atomic<size_t> enqueue_{0};
  alignas(64) size_t dequeue_ = 0;
};

// One producer, one consumer; the consumer may sleep until a frame arrives.
class SpscFrameQueue {
 public:
  explicit SpscFrameQueue(size_t capacity);
  bool push(std::span<const uint8_t> frame) noexcept;  // the producer; false (and counted) when full
  bool pop(OwnedFrame& out) noexcept;                  // the consumer; false when empty
  // Waits up to timeout for a frame.
  bool wait_pop(OwnedFrame& out, std::chrono::milliseconds timeout);
  // relaxed: a count for statistics; nothing else is published through it.
  uint64_t dropped() const noexcept { return dropped_.load(std::memory_order_relaxed); }

 private:
  std::unique_ptr<OwnedFrame[]> slots_;
  size_t capacity_;
  alignas(64) std::atomic<uint32_t> tail_{0};  // written by the producer (32-bit: it is waited on)
  alignas(64) std::atomic<uint32_t> head_{0};  // written by the consumer
  std::atomic<bool> sleeping_{false};          // the consumer waits on tail_ (futex)
  std::atomic<uint64_t> dropped_{0};
};

}  // namespace mavswitch
