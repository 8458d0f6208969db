#include "transport/output_queue.hpp"

#include <sys/socket.h>
#include <sys/uio.h>
#include <netinet/in.h>
#include <netinet/udp.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace mavswitch::transport {
namespace {

// Index i (< 2 x size) folded into a ring of `size` entries: a compare, where % would divide
// (tens of cycles per frame on the hot path).
size_t wrap(size_t i, size_t size) noexcept { return i >= size ? i - size : i; }

}  // namespace

bool StreamQueue::push(std::span<const uint8_t> frame) {
  if (capacity_ - size_ < frame.size()) return false;
  if (allocated_ - size_ < frame.size()) grow(size_ + frame.size());
  const size_t tail = wrap(head_ + size_, allocated_);
  const size_t room = allocated_ - tail;
  if (frame.size() <= room) {  // the common case: one copy, no wrap
    std::memcpy(ring_.get() + tail, frame.data(), frame.size());
  } else {
    std::memcpy(ring_.get() + tail, frame.data(), room);
    std::memcpy(ring_.get(), frame.data() + room, frame.size() - room);
  }
  size_ += frame.size();
  return true;
}

// The ring starts small and doubles up to the capacity as a slow peer needs it: most links
// never queue more than a few frames, and a thousand of them should not cost 256 KiB each.
void StreamQueue::grow(size_t needed) {
  size_t size = std::max<size_t>(allocated_ == 0 ? kInitialBytes : allocated_ * 2, needed);
  size = std::min(size, capacity_);
  auto bigger = std::make_unique<uint8_t[]>(size);
  const size_t first = std::min(size_, allocated_ - head_);
  if (size_ > 0) {
    std::memcpy(bigger.get(), ring_.get() + head_, first);
    std::memcpy(bigger.get() + first, ring_.get(), size_ - first);
  }
  ring_ = std::move(bigger);
  allocated_ = size;
  head_ = 0;
}

WriteResult StreamQueue::write_to(int fd) {
  while (size_ > 0) {
    iovec iov[2];
    const size_t first = std::min(size_, allocated_ - head_);
    iov[0] = {ring_.get() + head_, first};
    iov[1] = {ring_.get(), size_ - first};
    const ssize_t n = ::writev(fd, iov, size_ > first ? 2 : 1);
    if (n < 0) {
      if (errno == EINTR) continue;
      return (errno == EAGAIN || errno == EWOULDBLOCK) ? WriteResult::kBlocked : WriteResult::kError;
    }
    head_ = wrap(head_ + static_cast<size_t>(n), allocated_);
    size_ -= static_cast<size_t>(n);
  }
  head_ = 0;
  return WriteResult::kDrained;
}

bool DatagramQueue::push(std::span<const uint8_t> frame) {
  if (count_ == capacity_ || frame.size() > protocol::kMaxFrameLen) return false;
  if (count_ == allocated_) grow();
  Slot& s = slots_[wrap(head_ + count_, allocated_)];
  s.len = static_cast<uint16_t>(frame.size());
  std::memcpy(s.bytes, frame.data(), frame.size());
  ++count_;
  return true;
}

// As StreamQueue::grow: from a few slots up to the capacity, doubling.
void DatagramQueue::grow() {
  const size_t size = std::min(capacity_, allocated_ == 0 ? kInitialSlots : allocated_ * 2);
  auto bigger = std::make_unique<Slot[]>(size);
  for (size_t k = 0; k < count_; ++k) {
    const Slot& from = slots_[wrap(head_ + k, allocated_)];
    bigger[k].len = from.len;
    std::memcpy(bigger[k].bytes, from.bytes, from.len);
  }
  slots_ = std::move(bigger);
  allocated_ = size;
  head_ = 0;
}

WriteResult DatagramQueue::send_to(int fd, const SocketAddress* to, uint64_t* frames_sent, uint64_t* bytes_sent) {
  PeerSend one{this, to};
  const WriteResult r = send_all(fd, {&one, 1});
  *frames_sent += one.frames;
  *bytes_sent += one.bytes;
  return r;
}

WriteResult DatagramQueue::send_all(int fd, std::span<PeerSend> sends) {
  constexpr size_t kBatch = 64;            // datagrams per sendmmsg
  constexpr size_t kFramesPerDatagram = 32;
  bool refused = false;
  size_t first = 0;  // sends before it are drained
  for (;;) {
    while (first < sends.size() && sends[first].queue->count_ == 0) ++first;
    if (first == sends.size()) return refused ? WriteResult::kError : WriteResult::kDrained;
    mmsghdr msgs[kBatch];
    iovec iov[kBatch * kFramesPerDatagram];
    size_t frames_in[kBatch];
    size_t from[kBatch];  // the send each datagram belongs to
    frames_in[0] = 0, from[0] = first;  // there is one at least (`first` has frames); the compiler cannot tell
    alignas(cmsghdr) char control[kBatch][CMSG_SPACE(sizeof(uint16_t))];
    size_t n = 0;  // datagrams
    size_t next_iov = 0;
    for (size_t e = first; e < sends.size() && n < kBatch; ++e) {
      DatagramQueue& q = *sends[e].queue;
      size_t used = 0;  // frames of q taken, in order
      while (n < kBatch && used < q.count_) {
        msgs[n] = {};
        msgs[n].msg_hdr.msg_iov = &iov[next_iov];
        size_t bytes = 0;
        size_t k = 0;
        const uint16_t first_len = q.slots_[wrap(q.head_ + used, q.allocated_)].len;
        auto joins = [&](uint16_t len) {  // may the next frame join this send?
          if (q.coalesce_) return bytes + len <= kCoalescedDatagram;
          return q.segment_ && len == first_len;  // a GSO run: one datagram per frame on the wire
        };
        do {  // one frame at least; more while they fit
          const Slot& s = q.slots_[wrap(q.head_ + used, q.allocated_)];
          iov[next_iov++] = {const_cast<uint8_t*>(s.bytes), s.len};
          bytes += s.len;
          ++used;
          ++k;
        } while (used < q.count_ && k < kFramesPerDatagram && joins(q.slots_[wrap(q.head_ + used, q.allocated_)].len));
        msgs[n].msg_hdr.msg_iovlen = k;
        if (q.segment_ && k > 1) {
          msgs[n].msg_hdr.msg_control = control[n];
          msgs[n].msg_hdr.msg_controllen = sizeof control[n];
          cmsghdr* c = CMSG_FIRSTHDR(&msgs[n].msg_hdr);
          c->cmsg_level = SOL_UDP;
          c->cmsg_type = UDP_SEGMENT;
          c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
          std::memcpy(CMSG_DATA(c), &first_len, sizeof first_len);
        }
        if (const SocketAddress* to = sends[e].to) {
          msgs[n].msg_hdr.msg_name = const_cast<sockaddr*>(to->get());
          msgs[n].msg_hdr.msg_namelen = to->size();
        }
        from[n] = e;
        frames_in[n++] = k;
      }
    }
    const int sent = ::sendmmsg(fd, msgs, static_cast<unsigned>(n), MSG_DONTWAIT);
    if (sent < 0) {
      if (errno == EINTR) continue;
      DatagramQueue& q = *sends[from[0]].queue;
      if (q.segment_ && (errno == EIO || errno == EINVAL || errno == ENOPROTOOPT)) {
        q.segment_ = false;  // no segmentation offload here: one frame per send from now on
        continue;
      }
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) {
        for (size_t e = first; e < sends.size(); ++e) {
          if (sends[e].queue->count_ != 0) sends[e].result = WriteResult::kBlocked;
        }
        return WriteResult::kBlocked;
      }
      // An unreachable peer (ICMP error reported on this socket) loses this datagram only.
      q.head_ = wrap(q.head_ + frames_in[0], q.allocated_);
      q.count_ -= frames_in[0];
      sends[from[0]].result = WriteResult::kError;
      refused = true;
      continue;
    }
    for (size_t i = 0; i < static_cast<size_t>(sent); ++i) {
      PeerSend& p = sends[from[i]];
      DatagramQueue& q = *p.queue;
      for (size_t k = 0; k < frames_in[i]; ++k) p.bytes += q.slots_[wrap(q.head_ + k, q.allocated_)].len;
      p.frames += frames_in[i];
      q.head_ = wrap(q.head_ + frames_in[i], q.allocated_);
      q.count_ -= frames_in[i];
      if (q.count_ == 0) q.head_ = 0;
    }
  }
}

}  // namespace mavswitch::transport
