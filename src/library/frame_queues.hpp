// A bounded queue of whole frames from the router's thread to a thread of yours (a queued
// subscription): frames wait in a Handover (base/handover.hpp), and pop() hands them out one by
// one from the batch it took last. A full queue refuses the frame (counted); nothing blocks the
// router and nothing grows past the bound.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <span>

#include "base/handover.hpp"
#include "protocol/frame.hpp"
#include "protocol/frame_batch.hpp"

namespace mavswitch {

// A frame owned by value (fixed size, no allocation).
struct OwnedFrame {
  uint16_t size = 0;
  uint8_t bytes[protocol::kMaxFrameLen];
  std::span<const uint8_t> span() const noexcept { return {bytes, size}; }
};

// Puts `frame` into `to` unless `most` frames wait there already, it is too long, or `to` closed.
bool put_frame(Handover<protocol::FrameBatch>& to, std::span<const uint8_t> frame, size_t most);

class FrameQueue {
 public:
  // At most `capacity` frames waiting to be taken (and as many taken, not yet popped).
  explicit FrameQueue(size_t capacity) : capacity_(capacity) {}
  // The router's thread: false (and counted) when full.
  bool push(std::span<const uint8_t> frame);
  // Your thread: the oldest frame not yet popped; false when none waits.
  bool pop(OwnedFrame& out);
  // Your thread: pop(), waiting up to `timeout` for a frame.
  bool wait_pop(OwnedFrame& out, std::chrono::milliseconds timeout);
  // relaxed: a count for statistics; nothing else is published through it.
  uint64_t dropped() const noexcept { return dropped_.load(std::memory_order_relaxed); }

 private:
  bool next(OwnedFrame& out) noexcept;
  const size_t capacity_;
  Handover<protocol::FrameBatch> waiting_;
  protocol::FrameBatch taken_;  // your thread's: taken, popped up to next_ (at byte at_)
  size_t next_ = 0, at_ = 0;
  std::atomic<uint64_t> dropped_{0};
};

// The name of releases before 2026-12: one queue type now.
using SpscFrameQueue [[deprecated("use FrameQueue")]] = FrameQueue;

}  // namespace mavswitch
