// While a handover to another worker is half full, a worker reads no more: the kernel's socket
// buffers (megabytes) hold a burst that the handover (256 KiB) would have to drop. The fd a reader
// stopped at is held back in the loop (not reported readable), so the worker sleeps rather than
// polling it; the consumer wakes it when its drain has made room (FrameHandover::want_room()).
// Meanwhile the worker still publishes what is queued and drains its own inbound handovers, so two
// workers waiting on each other both make progress. A consumer that drains nothing for
// kMaxPause (stuck, say, in a component's callback on worker 0) is not waited for longer: the
// worker reads again, and what does not fit its handover is dropped and counted, so the links it
// serves for itself keep flowing.
#pragma once

#include <vector>

#include "router/frame_handover.hpp"
#include "routing/counter.hpp"
#include "transport/event_loop.hpp"

namespace mavswitch {

class InputPause {
 public:
  static constexpr transport::Millis kMaxPause = 200;

  void watch(FrameHandover* to) { handovers_.push_back(to); }  // one this worker produces into
  // Before each read: true, and `fd` held back, while a watched handover is filling.
  bool must_pause(transport::EventLoop& loop, int fd);
  // At the end of an iteration that holds input: release it once there is room, else ask to
  // be woken when there is (or when the pause runs out).
  void resume_when_room(transport::EventLoop& loop);
  uint64_t pauses() const noexcept { return pauses_.get(); }

 private:
  bool filling(transport::Millis now);
  static constexpr transport::Millis kNotPaused = -1;
  std::vector<FrameHandover*> handovers_;
  transport::Millis since_ = kNotPaused;     // since when filling() has said yes
  transport::EventLoop::TimerId timer_ = 0;  // wakes the loop when a pause runs out
  routing::Counter pauses_;
};

}  // namespace mavswitch
