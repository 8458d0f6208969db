#include "router/router.hpp"

#include "dialect/builtin.hpp"

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

void Router::run() { loop_.run(); }
void Router::stop() { loop_.stop(); }

void Router::link_up(transport::Link& link) {
  const routing::LinkId id = routing_.add_link(policies_[link.endpoint().policy_index]);
  link.id = id;
  if (id >= links_.size()) {
    links_.resize(id + 1, nullptr);
    sequences_.resize(id + 1);
  }
  links_[id] = &link;
  sequences_[id] = std::make_unique<routing::SequenceTracker>();
}

void Router::link_down(transport::Link& link) {
  if (link.id >= links_.size() || links_[link.id] != &link) return;
  routing_.remove_link(link.id);
  links_[link.id] = nullptr;
  sequences_[link.id].reset();
  std::erase(to_flush_, &link);
  link.id = routing::kNoLink;
}

void Router::frame_in(transport::Link& link, const protocol::FrameView& frame) {
  if (link.id >= links_.size()) return;
  sequences_[link.id]->record(frame.sysid(), frame.compid(), frame.seq());
  routing_.route(link.id, frame, loop_.now(), [&](routing::LinkId to) { links_[to]->send(frame.bytes()); });
  for (auto& tap : taps_) tap(frame, link);
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

const routing::SequenceTracker* Router::sequences(const transport::Link& link) const {
  return link.id < sequences_.size() ? sequences_[link.id].get() : nullptr;
}

}  // namespace mavswitch
