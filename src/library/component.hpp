// mavswitch::Component: this program as a MAVLink component on a Router, without a socket.
//
//   mavswitch::Router router;                     // plus endpoints, as mavswitchd would have
//   mavswitch::Component camera(router, 1, 100);  // system 1, component 100
//   auto sub = camera.subscribe<msg::CommandLong>([&](const msg::CommandLong& c, const auto&) { ... },
//                                                 {.addressed_to_me = true});
//   camera.send(msg::CameraInformation{...});
//
// Threads: handlers run on the router's thread unless delivered through subscribe_queued().
// send(), subscribe() and dropping a Subscription are safe from any thread; subscribe() has
// taken effect when it returns, and after an unsubscribe returns the handler is not running and
// never will be again. The Router must outlive its Components.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <stdexcept>
#include <type_traits>

#include "dialect/typed_message.hpp"
#include "library/frame_queues.hpp"
#include "library/newest_frames.hpp"
#include "library/subscriber_index.hpp"
#include "library/subscription.hpp"
#include "mavswitch/msg/command_ack.hpp"
#include "router/router.hpp"
#include "routing/counter.hpp"

namespace mavswitch {

class Transactions;

struct ComponentStats {
  uint64_t delivered = 0;      // frames routed to this component
  uint64_t decodes = 0;        // payloads decoded for typed subscribers (at most one per frame)
  uint64_t sent = 0;           // frames this component sent into the router
  uint64_t send_dropped = 0;   // sends refused: the queue to the router thread was full
  uint64_t queue_dropped = 0;  // frames refused by full subscriber queues
};

namespace library_detail {

inline constexpr size_t kDecodeBufferSize = 1024;  // larger than any MAVLink message struct

class ComponentLink;

// The component's state. Its place on the router is an endpoint with one transport link on the
// router's thread (component_link.hpp), opened by attach() and closed by detach().
class ComponentCore final : public std::enable_shared_from_this<ComponentCore> {
 public:
  ComponentCore(Router& router, uint8_t sysid, uint8_t compid, size_t send_queue_frames);
  void attach();
  void detach();
  Subscription add(std::shared_ptr<Subscriber> subscriber);
  void remove(uint64_t id);
  bool send_frame(std::span<const uint8_t> frame);
  // relaxed: a sequence number; only that each is taken once matters, it orders nothing.
  uint8_t next_seq() noexcept { return seq_.fetch_add(1, std::memory_order_relaxed); }
  // Router thread: a frame routed to it, to its subscribers (inside the routing decision).
  void dispatch(const protocol::FrameView& frame);
  void dispatch_to_subscribers(const protocol::FrameView& frame);
  // Router thread: its link is up (routed to as sysid/compid from now on) / going.
  void link_up(ComponentLink& link);
  void link_down() noexcept { link_ = nullptr; }
  ComponentStats stats() const;
  // Router thread: the newest frames, kept from the first call on.
  NewestFrames& newest_frames();

  Router& router;
  const uint8_t sysid;
  const uint8_t compid;
  transport::EventLoop::TimerId heartbeat_timer = 0;  // router thread

 private:
  void drain();
  void deliver(Subscriber& s, const protocol::FrameView& f, void* decoded, bool& have_decoded);
  bool addressed_to_me(const protocol::FrameView& f) const noexcept;

  size_t endpoint_ = 0;            // the router's index of its endpoint
  ComponentLink* link_ = nullptr;  // router thread: null before it is up and once it went
  std::shared_ptr<const SubscriberIndex> index_ = std::make_shared<SubscriberIndex>();  // router thread
  std::unique_ptr<NewestFrames> newest_;                // router thread; null until someone reads it
  const transport::EventLoop* newest_clock_ = nullptr;  // the router's loop: its time of this wake-up
  uint64_t next_id_ = 1;                                // router thread
  std::atomic<uint8_t> seq_{0};
  Handover<protocol::FrameBatch> send_queue_;  // frames sent from other threads
  const size_t send_queue_frames_;
  protocol::FrameBatch draining_;  // router thread
  // Counted on the router's thread (no locked instruction a frame); send_dropped_ by any sender.
  routing::Counter delivered_, decodes_, sent_, queue_dropped_, send_dropped_;
};

}  // namespace library_detail

class Component {
 public:
  Component(Router& router, uint8_t system_id, uint8_t component_id, size_t send_queue_frames = 1024);
  ~Component();
  Component(const Component&) = delete;
  Component& operator=(const Component&) = delete;

  uint8_t system_id() const noexcept { return core_->sysid; }
  uint8_t component_id() const noexcept { return core_->compid; }

  // Raw delivery: the frame as it was on the wire (zero-copy, valid during the call).
  Subscription subscribe(MessageFilter filter, std::function<void(const protocol::FrameView&)> handler);

  // Decoded delivery of message type M (filter.message_id is M::kId). Each frame is decoded at
  // most once, however many typed subscribers want it.
  template <class M>
  Subscription subscribe(std::function<void(const M&, const protocol::FrameView&)> handler, MessageFilter filter = {}) {
    static_assert(sizeof(M) <= library_detail::kDecodeBufferSize && std::is_trivially_destructible_v<M>);
    auto s = std::make_shared<library_detail::Subscriber>();
    filter.message_id = M::kId;
    s->filter = filter;
    s->typed = [h = std::move(handler)](const void* m, const protocol::FrameView& f) {
      h(*static_cast<const M*>(m), f);
    };
    s->decode = [](std::span<const uint8_t> payload, void* out) { ::new (out) M(M::decode(payload)); };
    return core_->add(std::move(s));
  }

  // Delivery to the caller's own thread: frames are copied into a bounded queue that the caller
  // drains (pop / wait_pop); overflow is dropped and counted. `handle` keeps it subscribed.
  std::shared_ptr<FrameQueue> subscribe_queued(MessageFilter filter, size_t capacity, Subscription& handle);

  // Packs M with this component's identity and sequence counter (MAVLink 2 unless v1) and
  // routes it like a frame arriving from a wire link. Any thread; false if the queue to the
  // router thread is full.
  template <class M>
  bool send(const M& message, bool v1 = false) {
    uint8_t buf[protocol::kMaxFrameLen];
    const size_t n = dialect::typed::encode_frame(
        message, {.seq = core_->next_seq(), .sysid = core_->sysid, .compid = core_->compid}, buf, v1);
    return core_->send_frame({buf, n});
  }
  // A frame built elsewhere (must be one whole, valid frame).
  bool send_raw(std::span<const uint8_t> frame) { return core_->send_frame(frame); }

  // Sends HEARTBEAT every period from the router thread until stopped (or destroyed).
  void start_heartbeat(uint8_t mav_type, uint8_t autopilot, std::chrono::milliseconds period = std::chrono::seconds(1));
  void stop_heartbeat();

  // Waits (not on the router thread) for a message M matching filter and `match`.
  template <class M>
  std::optional<M> wait_for(MessageFilter filter, std::function<bool(const M&)> match,
                            std::chrono::milliseconds timeout, const std::function<void()>& after_subscribing = {}) {
    if (core_->router.on_loop_thread()) throw std::logic_error("wait_for on the router thread would block routing");
    auto result = std::make_shared<std::promise<M>>();
    auto done = std::make_shared<bool>(false);
    Subscription sub = subscribe<M>(
        [=](const M& m, const protocol::FrameView&) {
          if (*done || (match && !match(m))) return;
          *done = true;
          result->set_value(m);
        },
        filter);
    if (after_subscribing) after_subscribing();
    auto future = result->get_future();
    if (future.wait_for(timeout) != std::future_status::ready) return std::nullopt;
    return future.get();
  }

  // This component's transaction engine (library/transactions.hpp): requests to another component
  // sent again until answered, answers taken only from its link. Used on the router's thread;
  // every user of this component shares it, so "one of a kind per target" holds for them all.
  Transactions& transactions() noexcept { return *transactions_; }

  // MAVLink's command protocol on the engine (library/command_exchange.hpp): COMMAND_LONG to
  // (target_system, target_component; 0: any of its components), sent again until its final
  // COMMAND_ACK comes, within about `timeout` (tries a second apart, or closer for a shorter
  // timeout). Any thread. The future holds the ack, or nothing: no ack, no route, or the same
  // command to that target already under way (the protocol allows one at a time).
  std::future<std::optional<msg::CommandAck>> command_async(
      uint8_t target_system, uint8_t target_component, uint16_t command, std::array<float, 7> params = {},
      std::chrono::milliseconds timeout = std::chrono::milliseconds(5000));
  // The same, waited for (not on the router's thread).
  std::optional<msg::CommandAck> command(uint8_t target_system, uint8_t target_component, uint16_t command,
                                         std::array<float, 7> params = {},
                                         std::chrono::milliseconds timeout = std::chrono::milliseconds(5000));

  ComponentStats stats() const { return core_->stats(); }

  // The newest frame of each (system, component, message) routed to this component, with its
  // rate (library/newest_frames.hpp): kept from the first call on, at a table probe and a copy a
  // frame, decoded only by whoever reads it. Router thread (read it there with run_on_loop).
  NewestFrames& newest_frames() { return core_->newest_frames(); }

 private:
  std::shared_ptr<library_detail::ComponentCore> core_;
  std::unique_ptr<Transactions> transactions_;  // holds *this: a Component does not move
};

}  // namespace mavswitch
