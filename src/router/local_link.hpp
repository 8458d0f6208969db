// A destination inside this process (an in-process component): routing delivers frames to it
// exactly as it does to a wire link, but as a FrameView, on the router's thread.
#pragma once

#include "protocol/frame.hpp"

namespace mavswitch {

class LocalLink {
 public:
  virtual void deliver(const protocol::FrameView& frame) = 0;

 protected:
  ~LocalLink() = default;
};

}  // namespace mavswitch
