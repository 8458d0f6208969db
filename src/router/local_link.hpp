// A destination the router's thread hands frames to itself (an in-process component, a
// WebSocket client): routing delivers frames to it exactly as it does to a wire link, as a
// FrameView and as the bytes that go out (signed, when the link signs), on the router's thread.
#pragma once

#include <cstdint>
#include <span>

#include "protocol/frame.hpp"

namespace mavswitch {

class LocalLink {
 public:
  virtual void deliver(const protocol::FrameView& frame, std::span<const uint8_t> bytes) = 0;

 protected:
  ~LocalLink() = default;
};

}  // namespace mavswitch
