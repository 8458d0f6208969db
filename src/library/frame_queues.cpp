#include "library/frame_queues.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bit>
#include <climits>

namespace mavswitch {

MpscFrameQueue::MpscFrameQueue(size_t capacity)
    : slots_(std::make_unique<Slot[]>(std::bit_ceil(capacity))), mask_(std::bit_ceil(capacity) - 1) {
  // relaxed: construction, before the queue is shared.
  for (size_t i = 0; i <= mask_; ++i) slots_[i].sequence.store(i, std::memory_order_relaxed);
}

bool MpscFrameQueue::push(std::span<const uint8_t> frame) noexcept {
  if (frame.size() > protocol::kMaxFrameLen) return false;
  size_t pos = enqueue_.load(std::memory_order_relaxed);
  Slot* slot;
  for (;;) {
    slot = &slots_[pos & mask_];
    const size_t seq = slot->sequence.load(std::memory_order_acquire);
    const auto diff = static_cast<intptr_t>(seq) - static_cast<intptr_t>(pos);
    if (diff == 0) {
      // relaxed: a claim ticket; the slot's sequence (acquire/release) orders the frame.
      if (enqueue_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) break;
    } else if (diff < 0) {
      return false;  // full
    } else {
      pos = enqueue_.load(std::memory_order_relaxed);
    }
  }
  slot->frame.size = static_cast<uint16_t>(frame.size());
  std::memcpy(slot->frame.bytes, frame.data(), frame.size());
  slot->sequence.store(pos + 1, std::memory_order_release);
  return true;
}

bool MpscFrameQueue::pop(OwnedFrame& out) noexcept {
  Slot& slot = slots_[dequeue_ & mask_];
  if (slot.sequence.load(std::memory_order_acquire) != dequeue_ + 1) return false;
  out.size = slot.frame.size;
  std::memcpy(out.bytes, slot.frame.bytes, slot.frame.size);
  slot.sequence.store(dequeue_ + mask_ + 1, std::memory_order_release);
  ++dequeue_;
  return true;
}

SpscFrameQueue::SpscFrameQueue(size_t capacity)
    : slots_(std::make_unique<OwnedFrame[]>(capacity + 1)), capacity_(capacity + 1) {}

bool SpscFrameQueue::push(std::span<const uint8_t> frame) noexcept {
  // relaxed: the owning side reads its own index; the other side's index is loaded acquire.
  const uint32_t tail = tail_.load(std::memory_order_relaxed);
  const uint32_t next = static_cast<uint32_t>((tail + 1) % capacity_);
  if (next == head_.load(std::memory_order_acquire) || frame.size() > protocol::kMaxFrameLen) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  OwnedFrame& slot = slots_[tail];
  slot.size = static_cast<uint16_t>(frame.size());
  std::memcpy(slot.bytes, frame.data(), frame.size());
  tail_.store(next, std::memory_order_seq_cst);
  if (sleeping_.load(std::memory_order_seq_cst)) {  // a system call only when the consumer sleeps
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(&tail_), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
  }
  return true;
}

bool SpscFrameQueue::pop(OwnedFrame& out) noexcept {
  // relaxed: the owning side reads its own index; the other side's index is loaded acquire.
  const uint32_t head = head_.load(std::memory_order_relaxed);
  if (head == tail_.load(std::memory_order_acquire)) return false;
  const OwnedFrame& slot = slots_[head];
  out.size = slot.size;
  std::memcpy(out.bytes, slot.bytes, slot.size);
  head_.store(static_cast<uint32_t>((head + 1) % capacity_), std::memory_order_release);
  return true;
}

bool SpscFrameQueue::wait_pop(OwnedFrame& out, std::chrono::milliseconds timeout) {
  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t), "futex on the atomic's storage");
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pop(out)) {
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero()) return false;
    // relaxed: the futex compares the value itself; a stale one only ends the wait early.
    const uint32_t seen = head_.load(std::memory_order_relaxed);  // empty: tail == head
    sleeping_.store(true, std::memory_order_seq_cst);
    if (tail_.load(std::memory_order_seq_cst) == seen) {  // still empty: sleep until a push
      const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
      timespec ts{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
      syscall(SYS_futex, reinterpret_cast<uint32_t*>(&tail_), FUTEX_WAIT_PRIVATE, seen, &ts, nullptr, 0);
    }
    // relaxed: a hint to the producer; a stale true costs one spare futex wake.
    sleeping_.store(false, std::memory_order_relaxed);
  }
  return true;
}

}  // namespace mavswitch
