#include "library/frame_queues.hpp"

namespace mavswitch {

bool put_frame(Handover<protocol::FrameBatch>& to, std::span<const uint8_t> frame, size_t most) {
  return frame.size() <= protocol::kMaxFrameLen && to.put([&](protocol::FrameBatch& waiting) {
    if (waiting.size() >= most) return false;
    waiting.add(frame);
    return true;
  });
}

bool FrameQueue::push(std::span<const uint8_t> frame) {
  const bool queued = put_frame(waiting_, frame, capacity_);
  // relaxed: a count for statistics; nothing else is published through it.
  if (!queued) dropped_.fetch_add(1, std::memory_order_relaxed);
  return queued;
}

bool FrameQueue::next(OwnedFrame& out) noexcept {
  if (next_ == taken_.size()) return false;
  out.size = taken_.sizes[next_++];
  std::memcpy(out.bytes, taken_.bytes.data() + at_, out.size);
  at_ += out.size;
  return true;
}

bool FrameQueue::pop(OwnedFrame& out) {
  if (next(out)) return true;
  waiting_.take(taken_);
  next_ = at_ = 0;
  return next(out);
}

bool FrameQueue::wait_pop(OwnedFrame& out, std::chrono::milliseconds timeout) {
  if (pop(out)) return true;
  waiting_.wait_take(taken_, timeout);
  next_ = at_ = 0;
  return next(out);
}

}  // namespace mavswitch
