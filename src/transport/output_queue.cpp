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
  constexpr size_t kBatch = 64;
  while (count_ > 0) {
    mmsghdr msgs[kBatch];
    iovec iov[kBatch];
    const size_t n = std::min({count_, kBatch, capacity_ - head_});  // contiguous slots only
    for (size_t i = 0; i < n; ++i) {
      Slot& s = slots_[head_ + i];
      iov[i] = {s.bytes, s.len};
      msgs[i] = {};
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
      if (to != nullptr) {
        msgs[i].msg_hdr.msg_name = const_cast<sockaddr*>(to->get());
        msgs[i].msg_hdr.msg_namelen = to->size();
      }
    }
    const int sent = ::sendmmsg(fd, msgs, static_cast<unsigned>(n), MSG_DONTWAIT);
    if (sent < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) return WriteResult::kBlocked;
      // An unreachable peer (ICMP error reported on this socket) loses these datagrams only.
      head_ = (head_ + 1) % capacity_;
      --count_;
      return WriteResult::kError;
    }
    for (int i = 0; i < sent; ++i) *bytes_sent += slots_[head_ + static_cast<size_t>(i)].len;
    *frames_sent += static_cast<uint64_t>(sent);
    head_ = (head_ + static_cast<size_t>(sent)) % capacity_;
    count_ -= static_cast<size_t>(sent);
  }
  head_ = 0;
  return WriteResult::kDrained;
}

}  // namespace mavswitch::transport
