#include "transport/output_queue.hpp"
#include "transport/kernel_calls.hpp"

#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/socket.h>
#include <sys/uio.h>

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
  ++frames_;
  shrink_.used(size_);
  return true;
}

// The ring starts small and doubles up to the capacity as a slow peer needs it: most links
// never queue more than a few frames, and a thousand of them should not cost 256 KiB each.
void StreamQueue::grow(size_t needed) {
  size_t size = std::max<size_t>(allocated_ == 0 ? kInitialBytes : allocated_ * 2, needed);
  size = std::min(size, capacity_);
  auto bigger = std::make_unique_for_overwrite<uint8_t[]>(size);  // pages are touched as frames arrive
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
    const ssize_t n = kernel::writev(fd, iov, size_ > first ? 2 : 1);
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

size_t StreamQueue::trim() noexcept {
  if (!shrink_.quiet(allocated_, kInitialBytes) || size_ != 0) return 0;
  const size_t released = allocated_;
  ring_.reset();
  allocated_ = 0;
  head_ = 0;
  return released;
}

bool DatagramQueue::push(std::span<const uint8_t> frame) {
  if (count_ == capacity_ || frame.size() > protocol::kMaxFrameLen) return false;
  if (end_ + frame.size() > bytes_allocated_ || first_ + count_ == lens_allocated_) [[unlikely]] {
    make_room(frame.size());
  }
  std::memcpy(bytes_.get() + end_, frame.data(), frame.size());
  end_ += frame.size();
  lens_[first_ + count_] = static_cast<uint16_t>(frame.size());
  ++count_;
  shrink_.used(end_ - begin_);
  return true;
}

// Room at the end of both buffers for one more frame of `bytes`. What a partial send left is
// moved to the front when the space before it is at least as large (so each byte moved frees
// one: a peer taking a frame at a time does not cost a move of the whole queue per frame) or
// when the buffer may grow no more; otherwise the buffer doubles. Buffers end at twice what a
// full queue of the largest frames needs, where moving always makes room.
void DatagramQueue::make_room(size_t bytes) {
  const size_t held = end_ - begin_;
  const size_t max_bytes = 2 * capacity_ * protocol::kMaxFrameLen;
  if (end_ + bytes > bytes_allocated_) {
    if (begin_ > 0 && (begin_ >= held || bytes_allocated_ >= max_bytes)) {
      std::memmove(bytes_.get(), bytes_.get() + begin_, held);
      begin_ = 0;
      end_ = held;
    }
    if (end_ + bytes > bytes_allocated_) {
      const size_t size =
          std::min(max_bytes, std::max(bytes_allocated_ == 0 ? kInitialBytes : bytes_allocated_ * 2, held + bytes));
      auto bigger = std::make_unique_for_overwrite<uint8_t[]>(size);  // pages are touched as frames arrive
      if (held > 0) std::memcpy(bigger.get(), bytes_.get() + begin_, held);
      bytes_ = std::move(bigger);
      bytes_allocated_ = size;
      begin_ = 0;
      end_ = held;
    }
  }
  if (first_ + count_ == lens_allocated_) {
    const size_t max_frames = 2 * capacity_;
    if (first_ > 0 && (first_ >= count_ || lens_allocated_ >= max_frames)) {
      std::memmove(lens_.get(), lens_.get() + first_, count_ * sizeof(uint16_t));
      first_ = 0;
    } else {
      const size_t size =
          std::min(max_frames, std::max(lens_allocated_ == 0 ? kInitialFrames : lens_allocated_ * 2, count_ + 1));
      auto bigger = std::make_unique_for_overwrite<uint16_t[]>(size);
      if (count_ > 0) std::memcpy(bigger.get(), lens_.get() + first_, count_ * sizeof(uint16_t));
      lens_ = std::move(bigger);
      lens_allocated_ = size;
      first_ = 0;
    }
  }
}

// The oldest frames, sent or refused, leave; a queue that empties starts again at the front.
void DatagramQueue::drop(size_t frames, size_t bytes) noexcept {
  first_ += frames;
  count_ -= frames;
  begin_ += bytes;
  if (count_ == 0) begin_ = end_ = first_ = 0;
}

size_t DatagramQueue::trim() noexcept {
  if (!shrink_.quiet(allocated_bytes(), kFirstAllocation) || count_ != 0) return 0;
  const size_t released = allocated_bytes();
  bytes_.reset();
  lens_.reset();
  bytes_allocated_ = lens_allocated_ = 0;
  return released;
}

WriteResult DatagramQueue::send_to(int fd, const SocketAddress* to, uint64_t* frames_sent, uint64_t* bytes_sent) {
  PeerSend one{this, to};
  const WriteResult r = send_all(fd, {&one, 1});
  *frames_sent += one.frames;
  *bytes_sent += one.bytes;
  return r;
}

WriteResult DatagramQueue::send_all(int fd, std::span<PeerSend> sends) {
  constexpr size_t kDatagramsPerSend = 64;  // datagrams per sendmmsg
  constexpr size_t kFramesPerDatagram = 32;
  bool refused = false;
  size_t first = 0;  // sends before it are drained
  for (;;) {
    while (first < sends.size() && sends[first].queue->count_ == 0) ++first;
    if (first == sends.size()) return refused ? WriteResult::kError : WriteResult::kDrained;
    mmsghdr msgs[kDatagramsPerSend];
    iovec iov[kDatagramsPerSend];  // a datagram's frames (or a GSO run's) lie back to back: one iovec
    size_t frames_in[kDatagramsPerSend];
    size_t from[kDatagramsPerSend];  // the send each datagram belongs to
    frames_in[0] = 0, from[0] = first,
    iov[0] = {};  // there is one at least (`first` has frames); the compiler cannot tell
    alignas(cmsghdr) char control[kDatagramsPerSend][CMSG_SPACE(sizeof(uint16_t))];
    size_t n = 0;  // datagrams
    for (size_t e = first; e < sends.size() && n < kDatagramsPerSend; ++e) {
      DatagramQueue& q = *sends[e].queue;
      const uint16_t* lens = q.lens_.get() + q.first_;
      size_t used = 0;  // frames of q taken, in order
      size_t offset = q.begin_;
      while (n < kDatagramsPerSend && used < q.count_) {
        msgs[n] = {};
        size_t bytes = 0;
        size_t k = 0;
        const uint16_t first_len = lens[used];
        auto joins = [&](uint16_t len) {  // may the next frame join this send?
          if (q.coalesce_) return bytes + len <= kCoalescedDatagram;
          return q.segment_ && len == first_len;  // a GSO run: one datagram per frame on the wire
        };
        do {  // one frame at least; more while they fit
          bytes += lens[used];
          ++used;
          ++k;
        } while (used < q.count_ && k < kFramesPerDatagram && joins(lens[used]));
        iov[n] = {q.bytes_.get() + offset, bytes};
        offset += bytes;
        msgs[n].msg_hdr.msg_iov = &iov[n];
        msgs[n].msg_hdr.msg_iovlen = 1;
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
    const int sent = kernel::sendmmsg(fd, msgs, static_cast<unsigned>(n), MSG_DONTWAIT);
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
      q.drop(frames_in[0], iov[0].iov_len);
      sends[from[0]].result = WriteResult::kError;
      refused = true;
      continue;
    }
    for (size_t i = 0; i < static_cast<size_t>(sent); ++i) {
      PeerSend& p = sends[from[i]];
      p.bytes += iov[i].iov_len;
      p.frames += frames_in[i];
      p.queue->drop(frames_in[i], iov[i].iov_len);
    }
  }
}

}  // namespace mavswitch::transport
