// Frames from one I/O worker to another, on the one handover between threads
// (base/handover.hpp): records of (destination links, frame) packed back to back in one byte
// batch, so a batch of small frames costs a copy each and no allocation, and a broadcast
// crosses once per worker, not once per destination link there. The producer stages records
// without a lock and hands the batch over once per loop iteration (publish(): one lock, a swap
// when the consumer has taken the last one); the consumer takes all that waits with one swap.
// Bounded: what is staged and waiting stays under kCapacity. A producer that finds half of it
// taken stops reading its input (filling()), leaving it in the kernel's buffers, and may ask
// to be told when the consumer has taken it (want_room()); past kCapacity a frame is refused
// (the producer counts it): a slow worker never blocks a fast one.
//
// Chose not to build: a lock-free ring. The lock is taken once per iteration, not per frame,
// and it makes "ask for room, or see it" one step under that lock instead of a pair of
// sequentially consistent stores and loads.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <type_traits>
#include <utility>

#include "base/handover.hpp"
#include "protocol/frame.hpp"
#include "routing/types.hpp"

namespace mavswitch {

// Records back to back: a header, the destination ids, the frame's bytes. And whether the
// producer waits for this batch to be taken.
struct FrameRecords {
  // Bytes that grow without being zeroed first (a record is written whole as it is added).
  class Bytes {
   public:
    size_t size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }
    const uint8_t* data() const noexcept { return data_.get(); }
    void clear() noexcept { size_ = 0; }
    // Room for `n` more bytes at the end, to be written at once.
    uint8_t* extend(size_t n) {
      if (size_ + n > capacity_) grow(size_ + n);
      uint8_t* at = data_.get() + size_;
      size_ += n;
      return at;
    }
    void append(const Bytes& more) {
      if (more.size_ != 0) std::memcpy(extend(more.size_), more.data_.get(), more.size_);
    }

   private:
    [[gnu::noinline]] void grow(size_t at_least) {
      const size_t capacity = std::max(at_least, std::max<size_t>(4096, capacity_ * 2));
      auto bigger = std::make_unique_for_overwrite<uint8_t[]>(capacity);
      if (size_ != 0) std::memcpy(bigger.get(), data_.get(), size_);
      data_ = std::move(bigger);
      capacity_ = capacity;
    }
    std::unique_ptr<uint8_t[]> data_;
    size_t size_ = 0, capacity_ = 0;
  };
  Bytes bytes;
  bool room_wanted = false;
  bool empty() const noexcept { return bytes.empty(); }
  void clear() noexcept { bytes.clear(), room_wanted = false; }

  struct Header {
    uint32_t count;  // destination link ids after the header, then the frame
    uint32_t msgid;
    uint16_t size;
    uint8_t flags;
    routing::LinkId from;
    const protocol::MessageInfo* info;
  };
  static size_t record_size(size_t destinations, size_t frame_bytes) noexcept {
    return sizeof(Header) + destinations * sizeof(routing::LinkId) + frame_bytes;
  }
  void add(std::span<const routing::LinkId> to, const protocol::FrameView& frame, std::span<const uint8_t> frame_bytes,
           routing::LinkId from) {
    const size_t ids = to.size() * sizeof(routing::LinkId);
    uint8_t* out = bytes.extend(sizeof(Header) + ids + frame_bytes.size());
    const Header h{static_cast<uint32_t>(to.size()),
                   frame.msgid(),
                   static_cast<uint16_t>(frame_bytes.size()),
                   static_cast<uint8_t>((frame.is_v2() ? protocol::FrameView::kV2 : 0) |
                                        (frame.verified() ? protocol::FrameView::kVerified : 0)),
                   from,
                   frame.info()};
    std::memcpy(out, &h, sizeof h);
    std::memcpy(out + sizeof h, to.data(), ids);
    std::memcpy(out + sizeof h + ids, frame_bytes.data(), frame_bytes.size());
  }
  // f(ids, count, frame, from) for each record, in order.
  template <class F>
  void for_each(F&& f) const {
    for (size_t at = 0; at < bytes.size();) {
      Header h;
      std::memcpy(&h, bytes.data() + at, sizeof h);
      const uint8_t* ids = bytes.data() + at + sizeof h;
      const size_t ids_size = h.count * sizeof(routing::LinkId);
      f(ids, h.count, protocol::FrameView(ids + ids_size, h.size, h.msgid, h.flags, h.info), h.from);
      at += sizeof h + ids_size + h.size;
    }
  }
};

class FrameHandover {
 public:
  static constexpr size_t kCapacity = size_t{1} << 18;  // 256 KiB staged and waiting, at most
  static constexpr size_t kMaxDestinations = 256;       // per record

  // `ring` tells the consumer that a batch waits (Handover's ring: signal only).
  explicit FrameHandover(Handover<FrameRecords>::Ring ring = {}) : handover_(std::move(ring)) {}

  // Producer: stages a frame for the links `to` (up to kMaxDestinations of them; none: a
  // consumer that takes frames, not deliveries, as the taps' does); `bytes` is what goes on the
  // wire (the frame itself, or its signed copy); `from`, the link it came in on (a component
  // that gets it asks where it came from). Invisible to the consumer until publish(). False,
  // and nothing staged, when it would pass kCapacity.
  bool push(std::span<const routing::LinkId> to, const protocol::FrameView& frame, std::span<const uint8_t> bytes,
            routing::LinkId from = routing::kNoLink) {
    const size_t record = FrameRecords::record_size(to.size(), bytes.size());
    if (staged_.bytes.size() + waiting_seen_ + record > kCapacity) {
      look_at_waiting();
      if (staged_.bytes.size() + waiting_seen_ + record > kCapacity) return false;
    }
    staged_.add(to, frame, bytes, from);
    return true;
  }
  bool push(routing::LinkId to, const protocol::FrameView& frame, std::span<const uint8_t> bytes) {
    return push(std::span<const routing::LinkId>(&to, 1), frame, bytes);
  }

  // Producer: hands over what was staged; true when there was anything. The first batch to
  // wait rings the consumer. A batch still waiting is added to; else the staged one is swapped
  // in whole (no copy) and the storage the consumer gave back is staged into next.
  bool publish() {
    if (staged_.empty()) return false;
    handover_.put([&](FrameRecords& waiting) {
      if (waiting.empty()) {
        std::swap(waiting.bytes, staged_.bytes);
      } else {
        waiting.bytes.append(staged_.bytes);
      }
      waiting_seen_ = waiting.bytes.size();
      return true;
    });
    staged_.bytes.clear();
    return true;
  }

  // Producer: whether half of kCapacity or more is staged or waiting, as last seen (looked at
  // again only when it seems so). The producer then stops taking input until the consumer
  // catches up.
  bool filling() {
    if (staged_.bytes.size() + waiting_seen_ < kCapacity / 2) return false;
    look_at_waiting();
    return staged_.bytes.size() + waiting_seen_ >= kCapacity / 2;
  }

  // Producer: asks the consumer's next take to say it made room (drain() returns true), if the
  // batch waiting is still half of kCapacity; in the same step under the lock, so either this
  // sees the room or the take sees the request.
  void want_room() {
    handover_.put([&](FrameRecords& waiting) {
      waiting_seen_ = waiting.bytes.size();
      if (waiting_seen_ >= kCapacity / 2) waiting.room_wanted = true;
      return false;  // adds nothing: no ring
    });
  }

  // Either side: bytes waiting to be taken (records).
  size_t pending_bytes() const {
    return handover_.look([](const FrameRecords& waiting) { return waiting.bytes.size(); });
  }

  // Consumer: calls f(to, frame) (or f(to, frame, from)) for every destination of every
  // waiting frame. True when the producer asked for room (want_room()): wake it.
  template <class F>
  bool drain(F&& f) {
    return drain_records(
        [&](const uint8_t* ids, uint32_t count, const protocol::FrameView& frame, routing::LinkId from) {
          for (uint32_t k = 0; k < count; ++k) {
            routing::LinkId to;
            std::memcpy(&to, ids + k * sizeof to, sizeof to);
            if constexpr (std::is_invocable_v<F, routing::LinkId, const protocol::FrameView&, routing::LinkId>)
              f(to, frame, from);
            else
              f(to, frame);
          }
        });
  }
  // Consumer: calls f(frame) once for every waiting frame, whatever its destinations.
  template <class F>
  bool drain_frames(F&& f) {
    return drain_records(
        [&](const uint8_t*, uint32_t, const protocol::FrameView& frame, routing::LinkId) { f(frame); });
  }

 private:
  template <class F>
  bool drain_records(F&& f) {
    handover_.take(taken_);
    taken_.for_each(f);
    return taken_.room_wanted;
  }
  void look_at_waiting() {
    waiting_seen_ = handover_.look([](const FrameRecords& waiting) { return waiting.bytes.size(); });
  }

  Handover<FrameRecords> handover_;
  // The producer's: records not yet handed over, and the waiting batch's size when last seen
  // (an upper bound: only the consumer shrinks it).
  FrameRecords staged_;
  size_t waiting_seen_ = 0;
  FrameRecords taken_;  // the consumer's: the batch it is draining
};

}  // namespace mavswitch
