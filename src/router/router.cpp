#include "router/router.hpp"

#include <future>

#include "dialect/builtin.hpp"
#include "protocol/signing.hpp"

namespace mavswitch {

Router::Router(RouterOptions options)
    : table_(options.message_table ? options.message_table : &dialect::builtin::message_table()), resolver_(loop_) {
  routing_.set_route_timeout(options.route_timeout);
  routing_.set_dedup_period(options.dedup_period);
  routing_.set_sniffer_sysid(options.sniffer_sysid);
  loop_.on_iteration_end([this] { flush_pending(); });
  loop_.every(1000, [this] { routing_.expire(loop_.now()); });
}

Router::~Router() { endpoints_.clear(); }

transport::Endpoint& Router::add_endpoint(transport::EndpointSpec spec, routing::LinkPolicy policy) {
  auto endpoint = transport::make_endpoint(std::move(spec), *this);
  endpoint->policy_index = policies_.size();
  policies_.push_back(std::move(policy));
  endpoints_.push_back(std::move(endpoint));
  return *endpoints_.back();
}

void Router::start() {
  for (auto& e : endpoints_) e->start();
}

void Router::run() {
  loop_thread_ = std::this_thread::get_id();
  loop_thread_.notify_all();
  loop_.run();
  loop_thread_ = std::thread::id{};
}

void Router::run_on_loop(const std::function<void()>& f) {
  if (on_loop_thread() || !running()) {
    f();
    return;
  }
  std::promise<void> done;
  loop_.post([&] {
    f();
    done.set_value();
  });
  done.get_future().wait();
}


void Router::stop() { loop_.stop(); }

void Router::link_up(transport::Link& link) {
  const routing::LinkId id = routing_.add_link(policies_[link.endpoint().policy_index]);
  link.id = id;
  if (id >= links_.size()) {
    links_.resize(id + 1);
    sequences_.resize(id + 1);
  }
  links_[id] = {&link, nullptr};
  sequences_[id] = std::make_unique<routing::SequenceTracker>();
}

void Router::link_down(transport::Link& link) {
  if (link.id >= links_.size() || links_[link.id].wire != &link) return;
  routing_.remove_link(link.id);
  links_[link.id] = {};
  sequences_[link.id].reset();
  std::erase(to_flush_, &link);
  link.id = routing::kNoLink;
}

void Router::frame_in(transport::Link& link, const protocol::FrameView& frame) {
  if (link.id >= links_.size()) return;
  sequences_[link.id]->record(frame.sysid(), frame.compid(), frame.seq());
  if (routing_.policy(link.id).signing) routing_.set_signing_now(protocol::signing_timestamp_now());
  routing_.route(link.id, frame, loop_.now(), [&](routing::LinkId to) { deliver(to, frame); });
  for (auto& tap : taps_) tap(frame);
}

void Router::deliver(routing::LinkId to, const protocol::FrameView& frame) {
  const Destination& d = links_[to];
  if (d.wire != nullptr) {
    const auto& signing = routing_.policy(to).signing;
    if (!signing || !signing->policy().sign) {
      d.wire->send(frame.bytes());
      return;
    }
    uint8_t signed_frame[protocol::kMaxFrameLen];
    const size_t n = protocol::sign_frame(frame, signing->policy().key, signing->policy().link_id,
                                          next_signing_timestamp(), signed_frame);
    if (n == 0) {  // MAVLink 1: cannot be signed; the peer's own policy decides
      ++signing->counters().unsignable_out;
      d.wire->send(frame.bytes());
      return;
    }
    ++signing->counters().signed_out;
    d.wire->send({signed_frame, n});
  } else if (d.local != nullptr) {
    d.local->deliver(frame);
  }
}

routing::LinkId Router::attach_local(LocalLink& link, uint8_t sysid, uint8_t compid, routing::LinkPolicy policy) {
  const routing::LinkId id = routing_.add_link(std::move(policy));
  if (id >= links_.size()) {
    links_.resize(id + 1);
    sequences_.resize(id + 1);
  }
  links_[id] = {nullptr, &link};
  routing_.pin(id, sysid, compid, loop_.now());
  return id;
}

void Router::detach_local(routing::LinkId id) {
  if (id >= links_.size() || links_[id].local == nullptr) return;
  routing_.remove_link(id);
  links_[id] = {};
}

void Router::route_local(routing::LinkId from, const protocol::FrameView& frame) {
  routing_.route(from, frame, loop_.now(), [&](routing::LinkId to) { deliver(to, frame); });
  for (auto& tap : taps_) tap(frame);
}

void Router::needs_flush(transport::Link& link) {
  link.flush_pending = true;
  to_flush_.push_back(&link);
}

void Router::flush_pending() {
  // A flush may close a link (write error), which removes it from to_flush_: work on a copy.
  static thread_local std::vector<transport::Link*> batch;
  batch.swap(to_flush_);
  for (transport::Link* l : batch) {
    l->flush_pending = false;
    l->flush();
  }
  batch.clear();
}

uint64_t Router::next_signing_timestamp() noexcept {
  signing_last_ = std::max(protocol::signing_timestamp_now(), signing_last_ + 1);
  return signing_last_;
}

const routing::SequenceTracker* Router::sequences(const transport::Link& link) const {
  return link.id < sequences_.size() ? sequences_[link.id].get() : nullptr;
}

}  // namespace mavswitch
