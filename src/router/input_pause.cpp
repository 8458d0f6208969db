#include "router/input_pause.hpp"

#include <algorithm>

namespace mavswitch {

bool InputPause::filling(transport::Millis now) {
  bool filling = false;
  for (FrameHandover* to : handovers_) filling = filling || to->filling();
  if (!filling) {
    since_ = kNotPaused;
    return false;
  }
  if (since_ == kNotPaused) {
    since_ = now;
    ++pauses_;
  }
  return now - since_ < kMaxPause;
}

bool InputPause::must_pause(transport::EventLoop& loop, int fd) {
  if (!filling(loop.now())) return false;
  loop.hold_input(fd);
  return true;
}

void InputPause::resume_when_room(transport::EventLoop& loop) {
  // Ask first, then look: a consumer that drains after the look sees the request and wakes us.
  for (FrameHandover* to : handovers_) {
    if (to->filling()) to->want_room();
  }
  if (!filling(loop.now())) {
    loop.release_input();
    if (timer_ != 0) {  // room came first: its wake-up is not needed
      loop.cancel(timer_);
      timer_ = 0;
    }
    return;
  }
  if (timer_ == 0) {  // and in any case when the pause runs out
    timer_ = loop.after(std::max<transport::Millis>(1, since_ + kMaxPause - loop.now()), [this] { timer_ = 0; });
  }
}

}  // namespace mavswitch
