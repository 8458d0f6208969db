#include "base/byte_stream.hpp"

#include <algorithm>
#include <cstring>

namespace mavswitch {

size_t ByteStream::room() const {
  std::lock_guard lock(mutex_);
  const size_t held = held_.size() - held_at_;
  return held >= capacity_ ? 0 : capacity_ - held;
}

void ByteStream::write(std::string_view bytes) {
  {
    std::lock_guard lock(mutex_);
    if (state_ != State::kOpen) return;
    if (held_at_ > 0 && held_at_ >= held_.size() / 2) {  // what was taken goes, now and then
      held_.erase(0, held_at_);
      held_at_ = 0;
    }
    held_.append(bytes);
  }
  ring();
}

void ByteStream::finish(bool whole) {
  {
    std::lock_guard lock(mutex_);
    if (state_ != State::kOpen) return;
    state_ = whole ? State::kWhole : State::kFailed;
  }
  ring();
}

bool ByteStream::cancelled() const {
  std::lock_guard lock(mutex_);
  return state_ == State::kCancelled;
}

void ByteStream::on_data(std::function<void()> ring) {
  std::lock_guard lock(mutex_);
  ring_ = std::move(ring);
}

size_t ByteStream::take(uint8_t* out, size_t max, bool* last) {
  std::function<void()> room;
  size_t n = 0;
  {
    std::lock_guard lock(mutex_);
    n = std::min(max, held_.size() - held_at_);
    std::memcpy(out, held_.data() + held_at_, n);
    held_at_ += n;
    if (held_at_ == held_.size()) {
      held_.clear();
      held_at_ = 0;
    }
    *last = state_ == State::kWhole && held_.empty();
    if (n > 0) room.swap(room_ring_);
  }
  if (room) room();
  return n;
}

bool ByteStream::wait_for_room(std::function<void()> ring) {
  std::lock_guard lock(mutex_);
  if (held_.size() - held_at_ < capacity_) return false;
  room_ring_ = std::move(ring);
  return true;
}

size_t ByteStream::available() const {
  std::lock_guard lock(mutex_);
  return held_.size() - held_at_;
}

ByteStream::State ByteStream::state() const {
  std::lock_guard lock(mutex_);
  return state_;
}

void ByteStream::cancel() {
  std::function<void()> room;  // a maker waiting for room goes on (its writes are dropped now)
  {
    std::lock_guard lock(mutex_);
    if (state_ == State::kOpen) state_ = State::kCancelled;
    held_.clear();
    held_.shrink_to_fit();
    held_at_ = 0;
    ring_ = nullptr;
    room.swap(room_ring_);
  }
  if (room) room();
}

void ByteStream::ring() {
  std::function<void()> ring;
  {
    std::lock_guard lock(mutex_);
    ring = ring_;
  }
  if (ring) ring();
}

}  // namespace mavswitch
