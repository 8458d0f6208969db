#include "library/component.hpp"

#include <fmt/format.h>

#include "base/fault.hpp"
#include "library/command_exchange.hpp"
#include "library/component_link.hpp"
#include "library/transactions.hpp"

#include "mavswitch/msg/command_long.hpp"
#include "mavswitch/msg/heartbeat.hpp"
#include "protocol/parser.hpp"

namespace mavswitch {

void Subscription::reset() {
  if (id_ == 0) return;
  if (auto core = core_.lock()) core->remove(id_);
  core_.reset();
  id_ = 0;
}

namespace library_detail {

ComponentCore::ComponentCore(Router& r, uint8_t sys, uint8_t comp, size_t send_queue_frames)
    : router(r),
      sysid(sys),
      compid(comp),
      // One wake-up of the router thread per batch: the first frame of a batch posts the drain.
      send_queue_([this] {
        router.event_loop().post([weak = weak_from_this()] {
          if (auto core = weak.lock()) core->drain();
        });
      }),
      send_queue_frames_(send_queue_frames) {}

void ComponentCore::attach() {
  transport::EndpointSpec spec;
  spec.kind = transport::EndpointSpec::Kind::kMade;
  spec.name = fmt::format("component-{}-{}", sysid, compid);
  spec.router_thread = true;
  spec.message_rates = false;  // a component's own requests go where it sends them
  spec.maker = component_maker(weak_from_this());
  endpoint_ = router.open_endpoint(std::move(spec));
}

void ComponentCore::link_up(ComponentLink& link) {
  MAVSWITCH_ASSERT_OWNER(router.event_loop(), "ComponentCore::link_up");
  link_ = &link;
  router.pin(link.id, sysid, compid);
}

void ComponentCore::detach() {
  router.run_on_loop([&] {
    if (heartbeat_timer) router.event_loop().cancel(heartbeat_timer);
    heartbeat_timer = 0;
  });
  router.close_endpoint(endpoint_);
  router.run_on_loop([&] { index_ = std::make_shared<SubscriberIndex>(); });
}

Subscription ComponentCore::add(std::shared_ptr<Subscriber> s) {
  uint64_t id = 0;
  router.run_on_loop([&] {
    id = next_id_++;
    s->id = id;
    index_ = std::make_shared<SubscriberIndex>(index_->with(std::move(s)));
  });
  return Subscription(weak_from_this(), id);
}

void ComponentCore::remove(uint64_t id) {
  router.run_on_loop([&] {
    if (auto s = index_->find(id)) s->alive = false;  // a dispatch in progress skips it from now on
    index_ = std::make_shared<SubscriberIndex>(index_->without(id));
  });
}

bool ComponentCore::addressed_to_me(const protocol::FrameView& f) const noexcept {
  const protocol::MessageInfo* info = f.info();
  if (info == nullptr || info->target_system_offset < 0) return false;
  if (f.payload_byte(info->target_system_offset) != sysid) return false;
  const uint8_t comp = f.payload_byte(info->target_component_offset);
  return comp == 0 || comp == compid;
}

// One subscriber's delivery, inlined into dispatch(): the frame path pays no call for it.
[[gnu::always_inline]] inline void ComponentCore::deliver(Subscriber& s, const protocol::FrameView& f, void* decoded,
                                                          bool& have_decoded) {
  if (s.filter.source_component && *s.filter.source_component != f.compid()) return;
  if (s.filter.addressed_to_me && !addressed_to_me(f)) return;
  if (s.filter.from_home && !router.from_home(f)) return;
  if (s.queue) {
    if (!s.queue->push(f.bytes())) ++queue_dropped_;
  } else if (s.raw) {
    s.raw(f);
  } else if (f.verified()) {
    if (!have_decoded) {
      s.decode(f.payload(), decoded);
      have_decoded = true;
      ++decodes_;
    }
    s.typed(decoded, f);
  }
}

// Router thread. The snapshot is held for the whole dispatch: handlers may subscribe and
// unsubscribe freely (they replace index_, not the snapshot being walked).
void ComponentCore::dispatch(const protocol::FrameView& f) {
  MAVSWITCH_ASSERT_OWNER(router.event_loop(), "ComponentCore::dispatch");
  ++delivered_;
  if (newest_) newest_->add(f, newest_clock_->now());
  if (index_->may_want(f.msgid())) dispatch_to_subscribers(f);
}

// Out of line: a frame nobody subscribed to does not pay for its stack and registers.
void ComponentCore::dispatch_to_subscribers(const protocol::FrameView& f) {
  const std::shared_ptr<const SubscriberIndex> index = index_;
  alignas(std::max_align_t) unsigned char decoded[kDecodeBufferSize];
  bool have_decoded = false;
  index->for_each_candidate(f.sysid(), f.msgid(), [&](Subscriber& s) {
    if (!s.alive) return;
    try {
      deliver(s, f, decoded, have_decoded);
    } catch (...) {  // the boundary: one handler fails on this frame, the others still get it
      fault::caught("a component's handler");
    }
  });
}

NewestFrames& ComponentCore::newest_frames() {
  MAVSWITCH_ASSERT_OWNER(router.event_loop(), "ComponentCore::newest_frames");
  if (!newest_) {
    newest_ = std::make_unique<NewestFrames>();
    newest_clock_ = &router.event_loop();
  }
  return *newest_;
}

bool ComponentCore::send_frame(std::span<const uint8_t> frame) {
  if (router.on_loop_thread()) {  // already where routing happens: route now
    const auto probe = protocol::probe_frame(router.routing_table(), frame.data(), frame.size());
    if (probe.status != protocol::Probe::Status::kFrame || probe.frame.size() != frame.size() || link_ == nullptr) {
      send_dropped_.add_shared();
      return false;
    }
    // Counted before routing: whoever sees the frame arrive sees it counted.
    ++sent_;
    link_->receive(probe.frame);  // checked once, here
    return true;
  }
  const bool queued = put_frame(send_queue_, frame, send_queue_frames_);
  if (!queued) send_dropped_.add_shared();
  return queued;
}

void ComponentCore::drain() {
  send_queue_.take(draining_);
  size_t at = 0;
  for (const uint16_t size : draining_.sizes) {
    send_frame({draining_.bytes.data() + at, size});
    at += size;
  }
}

ComponentStats ComponentCore::stats() const { return {delivered_, decodes_, sent_, send_dropped_, queue_dropped_}; }

}  // namespace library_detail

Component::Component(Router& router, uint8_t system_id, uint8_t component_id, size_t send_queue_frames)
    : core_(std::make_shared<library_detail::ComponentCore>(router, system_id, component_id, send_queue_frames)),
      transactions_(std::make_unique<Transactions>(router, *this)) {
  core_->attach();
}

Component::~Component() {
  transactions_.reset();  // first: its subscriptions and timers use this component
  core_->detach();
}

Subscription Component::subscribe(MessageFilter filter, std::function<void(const protocol::FrameView&)> handler) {
  auto s = std::make_shared<library_detail::Subscriber>();
  s->filter = filter;
  s->raw = std::move(handler);
  return core_->add(std::move(s));
}

std::shared_ptr<FrameQueue> Component::subscribe_queued(MessageFilter filter, size_t capacity, Subscription& handle) {
  auto s = std::make_shared<library_detail::Subscriber>();
  s->filter = filter;
  s->queue = std::make_shared<FrameQueue>(capacity);
  auto queue = s->queue;
  handle = core_->add(std::move(s));
  return queue;
}

void Component::start_heartbeat(uint8_t mav_type, uint8_t autopilot, std::chrono::milliseconds period) {
  stop_heartbeat();
  core_->router.run_on_loop([&] {
    core_->heartbeat_timer = core_->router.event_loop().every(period.count(), [this, mav_type, autopilot] {
      msg::Heartbeat hb;
      hb.type = mav_type;
      hb.autopilot = autopilot;
      hb.system_status = 4;  // MAV_STATE_ACTIVE
      send(hb);
    });
  });
}

void Component::stop_heartbeat() {
  core_->router.run_on_loop([&] {
    if (core_->heartbeat_timer) core_->router.event_loop().cancel(core_->heartbeat_timer);
    core_->heartbeat_timer = 0;
  });
}

std::future<std::optional<msg::CommandAck>> Component::command_async(uint8_t target_system, uint8_t target_component,
                                                                     uint16_t command, std::array<float, 7> params,
                                                                     std::chrono::milliseconds timeout) {
  // The protocol's second between tries, or tries closer together so that they fit `timeout`.
  const auto tries = static_cast<int>(std::max<int64_t>(1, (timeout.count() + 999) / 1000));
  const routing::Millis retry_ms = std::max<int64_t>(1, timeout.count() / tries);
  auto answer = std::make_shared<std::promise<std::optional<msg::CommandAck>>>();
  auto future = answer->get_future();
  const CommandExchange::Command c{target_system, target_component, command, params};
  // The engine, not this: a Component going meanwhile ends its engine's transactions on the loop
  // after this has run (its promise then broken, never kept).
  core_->router.event_loop().post(
      [engine = transactions_.get(), own = std::pair{core_->sysid, core_->compid}, c, tries, retry_ms, answer] {
        engine->run<CommandExchange>(engine, c.system, c.component, CommandExchange::kind(c.command),
                                     std::make_unique<CommandExchange>(c, tries, retry_ms),
                                     [own, answer](Transactions::End, const CommandExchange& e) {
                                       const CommandExchange::Outcome& o = e.outcome();
                                       if (!o.acknowledged) return answer->set_value(std::nullopt);
                                       msg::CommandAck ack;
                                       ack.command = e.command().command;
                                       ack.result = o.result;
                                       ack.progress = o.progress;
                                       ack.result_param2 = o.result_param2;
                                       ack.target_system = own.first;
                                       ack.target_component = own.second;
                                       answer->set_value(ack);
                                     });
      });
  return future;
}

std::optional<msg::CommandAck> Component::command(uint8_t target_system, uint8_t target_component, uint16_t command,
                                                  std::array<float, 7> params, std::chrono::milliseconds timeout) {
  if (core_->router.on_loop_thread()) throw std::logic_error("command() on the router thread would block routing");
  auto answer = command_async(target_system, target_component, command, params, timeout);
  // The engine ends it within `timeout`; a router that is not running never starts it.
  if (answer.wait_for(timeout + std::chrono::seconds(1)) != std::future_status::ready) return std::nullopt;
  try {
    return answer.get();
  } catch (const std::future_error&) {  // the component went before it ended
    return std::nullopt;
  }
}

}  // namespace mavswitch
