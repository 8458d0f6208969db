// The bounded single-producer/single-consumer queue that carries frames from one I/O worker to
// another: records of (destination links, frame) packed in one byte ring, so a batch of small
// frames costs a copy each and no allocation, and a broadcast crosses once per worker, not
// once per destination link there. The producer makes a batch visible with one
// publish(); the consumer drains everything published. A producer that finds the ring half
// full stops reading its input (filling()), leaving it in the kernel's buffers, and may ask to
// be told when the consumer has made room (want_room()); a ring full all the same refuses the
// frame (the producer counts it): a slow worker never blocks a fast one.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <type_traits>

#include "protocol/frame.hpp"
#include "routing/types.hpp"

namespace mavswitch {

class FrameRing {
 public:
  static constexpr size_t kCapacity = size_t{1} << 18;  // 256 KiB, allocated on first use
  static constexpr size_t kMaxDestinations = 256;       // per record

  // Producer: queues a frame for the links `to` (up to kMaxDestinations of them; none: a ring
  // whose consumer takes frames, not deliveries, as the taps' ring does); `bytes` is what goes
  // on the wire (the frame itself, or its signed copy); `from`, the link it came in on (a
  // component that gets it asks where it came from). Invisible to the consumer until publish().
  bool push(std::span<const routing::LinkId> to, const protocol::FrameView& frame, std::span<const uint8_t> bytes,
            routing::LinkId from = routing::kNoLink) noexcept {
    const size_t ids = to.size() * sizeof(routing::LinkId);
    const size_t record = (sizeof(Header) + ids + bytes.size() + 7) & ~size_t{7};
    const size_t offset = write_ & (kCapacity - 1);
    const size_t pad = kCapacity - offset < record ? kCapacity - offset : 0;  // no record wraps
    if (kCapacity - (write_ - cached_head_) < pad + record) {
      cached_head_ = head_.load(std::memory_order_acquire);
      if (kCapacity - (write_ - cached_head_) < pad + record) return false;
    }
    if (!buffer_) buffer_ = std::make_unique<uint8_t[]>(kCapacity);
    if (pad >= sizeof(Header)) write_header(offset, Header{kSkip, 0, 0, 0, routing::kNoLink, nullptr});
    write_ += pad;
    const size_t at = write_ & (kCapacity - 1);
    write_header(at, Header{static_cast<uint32_t>(to.size()), frame.msgid(), static_cast<uint16_t>(bytes.size()),
                            static_cast<uint8_t>((frame.is_v2() ? protocol::FrameView::kV2 : 0) |
                                                 (frame.verified() ? protocol::FrameView::kVerified : 0)),
                            from, frame.info()});
    std::memcpy(buffer_.get() + at + sizeof(Header), to.data(), ids);
    std::memcpy(buffer_.get() + at + sizeof(Header) + ids, bytes.data(), bytes.size());
    write_ += record;
    return true;
  }
  bool push(routing::LinkId to, const protocol::FrameView& frame, std::span<const uint8_t> bytes) noexcept {
    return push(std::span<const routing::LinkId>(&to, 1), frame, bytes);
  }
  // Producer: makes what was pushed visible; true when there was anything new. Sequentially
  // consistent, so that a consumer arming its wake-up and then draining cannot miss it.
  bool publish() noexcept {
    if (write_ == published_) return false;
    published_ = write_;
    tail_.store(write_, std::memory_order_seq_cst);
    return true;
  }

  // Producer: whether half the ring or more is taken (published or not) and not yet drained,
  // as last seen. The producer then stops taking input until the consumer catches up.
  bool filling() noexcept {
    if (write_ - cached_head_ < kCapacity / 2) return false;
    cached_head_ = head_.load(std::memory_order_seq_cst);  // after want_room(): see there
    return write_ - cached_head_ >= kCapacity / 2;
  }

  // Producer: asks the consumer's next drain to say it made room (drain() returns true), so
  // that a producer waiting for room can sleep instead of polling. Call it, then look with
  // filling(): either that look sees the room, or the drain that made it sees the request
  // (both sides store, then load, sequentially consistent).
  void want_room() noexcept { room_wanted_.store(true, std::memory_order_seq_cst); }

  // Producer: bytes published and not yet drained (records and padding), as last seen.
  size_t pending_bytes() const noexcept { return published_ - head_.load(std::memory_order_acquire); }

  // Consumer: calls f(to, frame) (or f(to, frame, from)) for every destination of every
  // published frame, then frees their space. True when that space was asked for (want_room()):
  // wake the producer.
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
  // Consumer: calls f(frame) once for every published frame, whatever its destinations.
  template <class F>
  bool drain_frames(F&& f) {
    return drain_records(
        [&](const uint8_t*, uint32_t, const protocol::FrameView& frame, routing::LinkId) { f(frame); });
  }

 private:
  template <class F>
  bool drain_records(F&& f) {
    const size_t tail = tail_.load(std::memory_order_seq_cst);
    // relaxed: the owning side reads its own index; the other side's index is loaded acquire.
    size_t head = head_.load(std::memory_order_relaxed);
    if (head == tail) return false;
    while (head != tail) {
      const size_t offset = head & (kCapacity - 1);
      if (kCapacity - offset < sizeof(Header)) {  // too little room at the end for a record
        head += kCapacity - offset;
        continue;
      }
      Header h;
      std::memcpy(&h, buffer_.get() + offset, sizeof h);
      if (h.count == kSkip) {
        head += kCapacity - offset;
        continue;
      }
      const uint8_t* ids = buffer_.get() + offset + sizeof h;
      const size_t ids_size = h.count * sizeof(routing::LinkId);
      const protocol::FrameView frame(ids + ids_size, h.size, h.msgid, h.flags, h.info);
      f(ids, h.count, frame, h.from);
      head += (sizeof h + ids_size + h.size + 7) & ~size_t{7};
    }
    head_.store(head, std::memory_order_seq_cst);
    return room_wanted_.load(std::memory_order_seq_cst) && room_wanted_.exchange(false);
  }

  struct Header {
    uint32_t count;  // destination link ids after the header, then the frame; kSkip: padding
    uint32_t msgid;
    uint16_t size;
    uint8_t flags;
    routing::LinkId from;  // in what was padding: the header stays 24 bytes
    const protocol::MessageInfo* info;
  };
  static_assert(sizeof(Header) == 16 + sizeof(void*));  // 24 bytes (20 on 32-bit ARM)
  static constexpr uint32_t kSkip = UINT32_MAX;
  void write_header(size_t at, const Header& h) noexcept { std::memcpy(buffer_.get() + at, &h, sizeof h); }

  std::unique_ptr<uint8_t[]> buffer_;  // written by the producer only before the tail covering it
  // Producer's side.
  size_t write_ = 0;
  size_t published_ = 0;
  size_t cached_head_ = 0;
  alignas(64) std::atomic<size_t> tail_{0};
  alignas(64) std::atomic<size_t> head_{0};
  std::atomic<bool> room_wanted_{false};  // set by the producer, cleared by the consumer
};

}  // namespace mavswitch
