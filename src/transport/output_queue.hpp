// Bounded per-link output queues. A frame is queued whole or dropped whole (counted by the
// caller); a peer that stops reading fills only its own queue. Storage is allocated on first
// use and grows (doubling) only as far as a peer falls behind, up to the capacity: an idle
// link costs a few words, a link that keeps up a few KiB.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "protocol/frame.hpp"
#include "transport/socket_address.hpp"

namespace mavswitch::transport {

enum class WriteResult { kDrained, kBlocked, kError };

// For byte streams (TCP, serial): a ring of bytes written with writev. A partial write keeps
// the rest of the frame for the next write, so frames are never cut.
class StreamQueue {
 public:
  explicit StreamQueue(size_t capacity_bytes) : capacity_(capacity_bytes) {}

  bool push(std::span<const uint8_t> frame);
  WriteResult write_to(int fd);  // writes until drained or the fd would block
  bool empty() const noexcept { return size_ == 0; }
  size_t size() const noexcept { return size_; }
  void clear() noexcept { head_ = size_ = 0; }

 private:
  static constexpr size_t kInitialBytes = 4096;
  void grow(size_t needed);
  size_t capacity_;
  size_t allocated_ = 0;
  std::unique_ptr<uint8_t[]> ring_;
  size_t head_ = 0;
  size_t size_ = 0;
};

// For datagrams (UDP): a ring of whole frames, sent with sendmmsg batches. With coalescing,
// frames already queued when the write happens share datagrams (up to kCoalescedDatagram
// bytes, never splitting a frame): fewer datagrams, no added delay. Without it, one frame per
// datagram, for receivers that need that; then, with segmentation offload (UDP GSO), a run of
// queued frames of equal size goes to the kernel as one send that it cuts into one datagram
// per frame: what the receiver sees is unchanged, the stack is walked once per run.
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
  void clear() noexcept { head_ = count_ = 0; }

 private:
  struct Slot {
    uint16_t len;
    uint8_t bytes[protocol::kMaxFrameLen];
  };
  static constexpr size_t kInitialSlots = 16;
  void grow();
  size_t capacity_;
  size_t allocated_ = 0;
  bool coalesce_;
  bool segment_;  // UDP GSO for runs of equal frames; turned off if the kernel refuses it
  std::unique_ptr<Slot[]> slots_;
  size_t head_ = 0;
  size_t count_ = 0;
};

}  // namespace mavswitch::transport
