// An in-process component's place on the router: an endpoint with one transport link, on the
// router's thread (worker 0, where the component's handlers run), listed, counted and filtered
// as every link is. A frame routed to it is dispatched to the component's subscribers at once,
// inside the routing decision: a direct call, no queue, no copy. A frame the component sends is
// received by the link as a peer's bytes are (parsed, counted, rate-limited), and routed after
// the decision that caused it, when a handler sent it (Worker::frame_in).
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "transport/endpoint.hpp"
#include "transport/link.hpp"

namespace mavswitch::library_detail {

class ComponentCore;

class ComponentLink final : public transport::Link {
 public:
  ComponentLink(transport::Endpoint& endpoint, transport::LinkHost& host, ComponentCore& core);
  // Router thread: one whole frame the component sends.
  void receive(const protocol::FrameView& frame) { received_frame(frame); }
  void flush() override {}

 private:
  bool take(const protocol::FrameView& frame, std::span<const uint8_t> bytes) override;
  bool enqueue(std::span<const uint8_t> frame) override;  // what was paced: bytes only
  ComponentCore& core_;
};

// What opens a component's endpoint (EndpointSpec::maker); it holds the component weakly: a
// closed endpoint's spec, kept by the router for the record, keeps nothing alive.
std::shared_ptr<const transport::EndpointMaker> component_maker(std::weak_ptr<ComponentCore> core);

}  // namespace mavswitch::library_detail
