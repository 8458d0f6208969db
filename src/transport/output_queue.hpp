// Bounded per-link output queues. A frame is queued whole or dropped whole (counted by the
// caller); a peer that stops reading fills only its own queue. Storage is allocated on first
// use, grows (doubling) only as far as a peer falls behind, up to the capacity, and is given
// back once the queue has stayed far below its size for a while: an idle link costs a few
// words, a link that keeps up a few KiB, and a burst (a fleet's peers all heard at once, a
// ground station that paused) does not leave every queue at its high-water mark.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "protocol/frame.hpp"
#include "transport/socket_address.hpp"

namespace mavswitch::transport {

enum class WriteResult { kDrained, kBlocked, kError };

// When an empty queue gives its storage back: at a trim (about once a second, from the worker
// that owns it) when it never held a quarter of what it has allocated since the trim before.
// Not at each drain, so a link that fills the same buffer burst after burst keeps it (memory
// touched again costs page faults: bench/LOG.md), and a link that falls silent after a burst
// still gives it back.
class QuietShrink {
 public:
  void used(size_t bytes) noexcept {
    if (bytes > peak_) peak_ = bytes;
  }
  // At each trim: true when `allocated` bytes (over `floor`) have been mostly idle since the last.
  bool quiet(size_t allocated, size_t floor) noexcept {
    const bool idle = allocated > floor && peak_ < allocated / 4;
    peak_ = 0;
    return idle;
  }

 private:
  size_t peak_ = 0;
};

// For byte streams (TCP, serial): a ring of bytes written with writev. A partial write keeps
// the rest of the frame for the next write, so frames are never cut.
class StreamQueue {
 public:
  explicit StreamQueue(size_t capacity_bytes) : capacity_(capacity_bytes) {}

  bool push(std::span<const uint8_t> frame);
  WriteResult write_to(int fd);  // writes until drained or the fd would block
  bool empty() const noexcept { return size_ == 0; }
  size_t size() const noexcept { return size_; }
  size_t queued_bytes() const noexcept { return size_; }
  size_t allocated_bytes() const noexcept { return allocated_; }
  void clear() noexcept {
    head_ = size_ = 0;
    frames_ = 0;
  }
  size_t trim() noexcept;  // see QuietShrink; returns the bytes given back
  // Frames pushed since the queue was last empty, counted as sent once it is: a byte stream
  // keeps no frame boundaries, so a frame partly written is not yet counted (and one that
  // never left, never is).
  uint64_t take_sent_frames() noexcept {
    if (size_ != 0) return 0;
    const uint64_t n = frames_;
    frames_ = 0;
    return n;
  }

 private:
  static constexpr size_t kInitialBytes = 4096;
  void grow(size_t needed);
  size_t capacity_;
  size_t allocated_ = 0;
  std::unique_ptr<uint8_t[]> ring_;
  size_t head_ = 0;
  size_t size_ = 0;
  uint64_t frames_ = 0;
  QuietShrink shrink_;
};

// For datagrams (UDP): whole frames, sent with sendmmsg batches. With coalescing, frames
// already queued when the write happens share datagrams (up to kCoalescedDatagram bytes, never
// splitting a frame): fewer datagrams, no added delay. Without it, one frame per datagram, for
// receivers that need that; then, with segmentation offload (UDP GSO), a run of queued frames
// of equal size goes to the kernel as one send that it cuts into one datagram per frame: what
// the receiver sees is unchanged, the stack is walked once per run.
//
// Frames lie back to back in one byte buffer, their lengths in another, so a queue holds what
// its frames weigh (a 21-byte HEARTBEAT takes 21 bytes and a length, not a 280-byte slot) and
// the frames of one datagram or one GSO run are a single iovec. Both buffers are linear: a
// drained queue starts again at their beginning, and a push that finds no room at the end
// moves what a partial send left over to the front before it grows anything.
class DatagramQueue {
 public:
  static constexpr size_t kCoalescedDatagram = 1400;  // under a 1500-byte MTU with headers

  explicit DatagramQueue(size_t capacity_frames, bool coalesce = true, bool segment = true)
      : capacity_(capacity_frames), coalesce_(coalesce), segment_(!coalesce && segment) {}

  bool push(std::span<const uint8_t> frame);
  // Sends to `to`, or on a connected socket when to is null, until drained or blocked. A
  // datagram the kernel refuses (an ICMP error reported on the socket) is dropped: kError.
  WriteResult send_to(int fd, const SocketAddress* to, uint64_t* frames_sent, uint64_t* bytes_sent);

  // One queue's part in a send of several (send_all): where it goes, and what it sent.
  struct PeerSend {
    DatagramQueue* queue;
    const SocketAddress* to;
    uint64_t frames = 0;
    uint64_t bytes = 0;
    WriteResult result = WriteResult::kDrained;
  };
  // The queues of several peers on one socket (a UDP server's), in as few sendmmsg calls as
  // their datagrams fill: kBlocked when the socket would take no more (those not drained say
  // so), else kError when some datagram was refused, else kDrained.
  static WriteResult send_all(int fd, std::span<PeerSend> sends);
  bool empty() const noexcept { return count_ == 0; }
  size_t size() const noexcept { return count_; }
  size_t queued_bytes() const noexcept { return end_ - begin_; }
  size_t allocated_bytes() const noexcept { return bytes_allocated_ + lens_allocated_ * sizeof(uint16_t); }
  void clear() noexcept { drop(count_, end_ - begin_); }
  size_t trim() noexcept;  // see QuietShrink; returns the bytes given back

 private:
  static constexpr size_t kInitialBytes = 1024;
  static constexpr size_t kInitialFrames = 16;
  // What a first push allocates; a quiet queue keeps this much (QuietShrink's floor).
  static constexpr size_t kFirstAllocation = kInitialBytes + kInitialFrames * sizeof(uint16_t);
  void make_room(size_t bytes);
  void drop(size_t frames, size_t bytes) noexcept;  // the oldest, sent or refused
  size_t capacity_;                                 // frames
  bool coalesce_;
  bool segment_;                      // UDP GSO for runs of equal frames; turned off if the kernel refuses it
  std::unique_ptr<uint8_t[]> bytes_;  // frames in [begin_, end_)
  std::unique_ptr<uint16_t[]> lens_;  // their lengths in [first_, first_ + count_)
  size_t bytes_allocated_ = 0;
  size_t lens_allocated_ = 0;
  size_t begin_ = 0;
  size_t end_ = 0;
  size_t first_ = 0;
  size_t count_ = 0;
  QuietShrink shrink_;
};

}  // namespace mavswitch::transport
