// A connected byte stream (a TCP connection, an open serial port) as a link: reads drain the
// fd into the parser, writes go out of a bounded StreamQueue, EPOLLOUT is armed only while the
// peer is behind. On EOF or error the owner's on_closed callback decides what follows.
#pragma once

#include <functional>

#include "transport/event_loop.hpp"
#include "transport/link.hpp"
#include "transport/output_queue.hpp"

namespace mavswitch::transport {

class StreamLink final : public Link, private EventLoop::Handler {
 public:
  using ClosedFn = std::function<void(StreamLink&, const std::string& why)>;

  // Takes ownership of fd (non-blocking) and registers it with the loop.
  StreamLink(Endpoint& endpoint, LinkHost& host, std::string peer, int fd, size_t queue_bytes, ClosedFn on_closed);
  ~StreamLink() override;

  void flush() override;
  size_t trim_queues() override { return queue_.trim(); }
  size_t queue_storage() const noexcept override { return queue_.allocated_bytes(); }
  size_t queued_bytes() const noexcept override { return queue_.queued_bytes(); }
  // Stops I/O at once (fd closed, loop deregistered); the object may be destroyed later.
  void close(const std::string& why);
  bool closed() const noexcept { return fd_ < 0; }
  int fd() const noexcept { return fd_; }
  // Bytes read since opened (serial baud detection watches frames_in instead).

 private:
  bool enqueue(std::span<const uint8_t> frame) override;
  void on_io(uint32_t events) override;
  // Reads until the kernel has nothing left, a bound, or (unless `to_the_end`) the host pauses input.
  void read_all(bool to_the_end = false);

  int fd_;
  StreamQueue queue_;
  ClosedFn on_closed_;
};

}  // namespace mavswitch::transport
