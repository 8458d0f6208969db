// What Link::send does when a link's queue is full: write it out and try again, unless the
// kernel refused the last write (then drop and count, without a system call per frame).
#include <gtest/gtest.h>

#include <vector>

#include "dialect/builtin.hpp"
#include "transport/endpoint.hpp"
#include "transport/event_loop.hpp"
#include "transport/resolver.hpp"

using namespace mavswitch;
using namespace mavswitch::transport;

namespace {

class Host final : public LinkHost {
 public:
  void link_up(Link&) override {}
  void link_down(Link&) override {}
  void frame_in(Link&, const protocol::FrameView&) override {}
  void needs_flush(Link& link) override { link.flush_pending = true; }
  const protocol::MessageTable& message_table() const override { return dialect::builtin::message_table(); }
  EventLoop& loop() override { return loop_; }
  Resolver& resolver() override { return resolver_; }

 private:
  EventLoop loop_;
  Resolver resolver_{loop_};
};

class NoEndpoint final : public Endpoint {
 public:
  using Endpoint::Endpoint;
  void start() override {}
  void for_each_link(const std::function<void(const Link&)>&) const override {}
};

// A queue of `capacity` frames in front of a "socket" that takes everything, or nothing while
// `kernel_full` is set.
class QueueLink final : public Link {
 public:
  QueueLink(Endpoint& e, LinkHost& h, size_t capacity) : Link(e, h, "test"), capacity_(capacity) {}
  void flush() override {
    ++flushes;
    if (!kernel_full) {
      written += queued_;
      queued_ = 0;
    }
    note_write_blocked(kernel_full && queued_ > 0);
  }
  size_t flushes = 0, written = 0;
  bool kernel_full = false;

 private:
  bool enqueue(std::span<const uint8_t>) override {
    if (queued_ == capacity_) return false;
    ++queued_;
    return true;
  }
  size_t capacity_, queued_ = 0;
};

const uint8_t kFrame[12] = {0xFD};

}  // namespace

TEST(LinkSend, AFullQueueIsWrittenOutAndTheFrameKept) {
  Host host;
  NoEndpoint endpoint(EndpointSpec{}, host);
  QueueLink link(endpoint, host, 4);
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(link.send(kFrame));
  EXPECT_EQ(link.flushes, 2u);  // at the 5th and the 9th frame
  EXPECT_EQ(link.written, 8u);
  EXPECT_EQ(link.counters().dropped_queue_full, 0u);
}

TEST(LinkSend, ALinkTheKernelRefusedDropsWithoutAWriteAttemptPerFrame) {
  Host host;
  NoEndpoint endpoint(EndpointSpec{}, host);
  QueueLink link(endpoint, host, 4);
  link.kernel_full = true;
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(link.send(kFrame));
  EXPECT_FALSE(link.send(kFrame));  // full: one write attempt, refused
  EXPECT_EQ(link.flushes, 1u);
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(link.send(kFrame));
  EXPECT_EQ(link.flushes, 1u) << "no write attempt per frame while the kernel refuses";
  EXPECT_EQ(link.counters().dropped_queue_full, 101u);

  // Writable again (the loop flushes on EPOLLOUT): frames are taken again.
  link.kernel_full = false;
  link.flush();
  EXPECT_EQ(link.written, 4u);
  EXPECT_TRUE(link.send(kFrame));
}
