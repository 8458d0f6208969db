#include "transport/output_queue.hpp"

#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace mavswitch::transport {

bool StreamQueue::push(std::span<const uint8_t> frame) {
  if (capacity_ - size_ < frame.size()) return false;
  if (!ring_) ring_ = std::make_unique<uint8_t[]>(capacity_);
  const size_t tail = (head_ + size_) % capacity_;
  const size_t first = std::min(frame.size(), capacity_ - tail);
  std::memcpy(ring_.get() + tail, frame.data(), first);
  std::memcpy(ring_.get(), frame.data() + first, frame.size() - first);
  size_ += frame.size();
  return true;
}

WriteResult StreamQueue::write_to(int fd) {
  while (size_ > 0) {
    iovec iov[2];
    const size_t first = std::min(size_, capacity_ - head_);
    iov[0] = {ring_.get() + head_, first};
    iov[1] = {ring_.get(), size_ - first};
    const ssize_t n = ::writev(fd, iov, size_ > first ? 2 : 1);
    if (n < 0) {
      if (errno == EINTR) continue;
      return (errno == EAGAIN || errno == EWOULDBLOCK) ? WriteResult::kBlocked : WriteResult::kError;
    }
    head_ = (head_ + static_cast<size_t>(n)) % capacity_;
    size_ -= static_cast<size_t>(n);
  }
  head_ = 0;
  return WriteResult::kDrained;
}

bool DatagramQueue::push(std::span<const uint8_t> frame) {
  if (count_ == capacity_ || frame.size() > protocol::kMaxFrameLen) return false;
  if (!slots_) slots_ = std::make_unique<Slot[]>(capacity_);
  Slot& s = slots_[(head_ + count_) % capacity_];
  s.len = static_cast<uint16_t>(frame.size());
  std::memcpy(s.bytes, frame.data(), frame.size());
  ++count_;
  return true;
}

WriteResult DatagramQueue::send_to(int fd, const SocketAddress* to, uint64_t* frames_sent, uint64_t* bytes_sent) {
  constexpr size_t kBatch = 64;            // datagrams per sendmmsg
  constexpr size_t kFramesPerDatagram = 32;
  while (count_ > 0) {
    mmsghdr msgs[kBatch];
    iovec iov[kBatch * kFramesPerDatagram];
    size_t frames_in[kBatch];
    size_t n = 0;  // datagrams
    size_t used = 0;  // frames taken from the ring, in order
    size_t next_iov = 0;
    while (n < kBatch && used < count_) {
      msgs[n] = {};
      msgs[n].msg_hdr.msg_iov = &iov[next_iov];
      size_t bytes = 0;
      size_t k = 0;
      do {  // one frame at least; more while they fit
        const Slot& s = slots_[(head_ + used) % capacity_];
        iov[next_iov++] = {const_cast<uint8_t*>(s.bytes), s.len};
        bytes += s.len;
        ++used;
        ++k;
      } while (coalesce_ && used < count_ && k < kFramesPerDatagram &&
               bytes + slots_[(head_ + used) % capacity_].len <= kCoalescedDatagram);
      msgs[n].msg_hdr.msg_iovlen = k;
      if (to != nullptr) {
        msgs[n].msg_hdr.msg_name = const_cast<sockaddr*>(to->get());
        msgs[n].msg_hdr.msg_namelen = to->size();
      }
      frames_in[n++] = k;
    }
    const int sent = ::sendmmsg(fd, msgs, static_cast<unsigned>(n), MSG_DONTWAIT);
    if (sent < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) return WriteResult::kBlocked;
      // An unreachable peer (ICMP error reported on this socket) loses this datagram only.
      head_ = (head_ + frames_in[0]) % capacity_;
      count_ -= frames_in[0];
      return WriteResult::kError;
    }
    for (int i = 0; i < sent; ++i) {
      for (size_t k = 0; k < frames_in[i]; ++k) *bytes_sent += slots_[(head_ + k) % capacity_].len;
      *frames_sent += frames_in[i];
      head_ = (head_ + frames_in[i]) % capacity_;
      count_ -= frames_in[i];
    }
  }
  head_ = 0;
  return WriteResult::kDrained;
}

}  // namespace mavswitch::transport
