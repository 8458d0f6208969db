#include "transport/stream_link.hpp"

#include <sys/epoll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "transport/endpoint.hpp"
#include "transport/kernel_calls.hpp"

namespace mavswitch::transport {
namespace {
// One read buffer for every stream on the loop's thread: frames are views into it and are
// consumed (copied into output queues) before the next read. On the heap, made on the thread's
// first read (see datagram_reader.cpp: not in every thread's static storage).
constexpr size_t kReadBuffer = 64 * 1024;
uint8_t* thread_read_buffer() {
  thread_local std::unique_ptr<uint8_t[]> buffer;
  if (!buffer) buffer = std::make_unique_for_overwrite<uint8_t[]>(kReadBuffer);
  return buffer.get();
}
constexpr int kMaxReadsPerWakeup = 16;  // then let other links have their turn
}  // namespace

StreamLink::StreamLink(Endpoint& endpoint, LinkHost& host, std::string peer, int fd, size_t queue_bytes,
                       ClosedFn on_closed)
    : Link(endpoint, host, std::move(peer)), fd_(fd), queue_(queue_bytes), on_closed_(std::move(on_closed)) {
  host_.loop().add(fd_, EPOLLIN | EPOLLRDHUP, this);
}

StreamLink::~StreamLink() {
  if (fd_ >= 0) {
    host_.loop().remove(fd_);
    ::close(fd_);
  }
}

bool StreamLink::enqueue(std::span<const uint8_t> frame) {
  if (fd_ < 0) return false;
  return queue_.push(frame);
}

void StreamLink::flush() {
  if (fd_ < 0) return;
  const size_t before = queue_.size();
  const WriteResult r = queue_.write_to(fd_);
  counters_.bytes_out += before - queue_.size();
  counters_.frames_out += queue_.take_sent_frames();  // whole once the queue drained
  if (r == WriteResult::kError) {
    close(std::string("write: ") + std::strerror(errno));
    return;
  }
  const bool blocked = r == WriteResult::kBlocked;
  if (note_write_blocked(blocked)) {  // wait for writable only while blocked
    host_.loop().modify(fd_, EPOLLIN | EPOLLRDHUP | (blocked ? EPOLLOUT : 0u));
  }
}

void StreamLink::read_all(bool to_the_end) {
  for (int i = 0; i < kMaxReadsPerWakeup; ++i) {
    // Paused: the rest stays in the kernel (reported again once the host releases the fd), and
    // this is not the end of a burst, so a trailing frame of unknown id waits for what follows.
    if (!to_the_end && host_.input_paused(fd_)) return;
    uint8_t* const buffer = thread_read_buffer();
    const ssize_t n = kernel::read(fd_, buffer, kReadBuffer);
    if (n > 0) {
      received({buffer, static_cast<size_t>(n)}, false);
      if (fd_ < 0) return;
      // A short read took everything the kernel had: asking again would only return EAGAIN
      // (one system call per wake-up for nothing). Level-triggered epoll reports what comes next.
      if (static_cast<size_t>(n) < kReadBuffer) break;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    const int err = errno;
    received_end();  // the end-of-stream pass: frames behind a false start still go
    close(n == 0 ? "closed by peer" : std::string("read: ") + std::strerror(err));
    return;
  }
  received({}, true);  // the burst is over: an unknown-id frame at the end may go now
}

void StreamLink::on_io(uint32_t events) {
  if (events & EPOLLIN) read_all();
  if (fd_ >= 0 && (events & EPOLLOUT)) flush();
  if (fd_ >= 0 && (events & (EPOLLERR | EPOLLHUP))) {
    read_all(true);  // take what is left, then report the close
    if (fd_ >= 0) close("hang-up");
  }
}

void StreamLink::close(const std::string& why) {
  if (fd_ < 0) return;
  host_.loop().remove(fd_);
  ::close(fd_);
  fd_ = -1;
  queue_.clear();
  if (on_closed_) on_closed_(*this, why);
}

}  // namespace mavswitch::transport
