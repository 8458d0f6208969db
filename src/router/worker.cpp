#include "router/worker.hpp"

#include <fmt/ranges.h>

#include <algorithm>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "base/log.hpp"
#include "protocol/signing.hpp"
#include "transport/endpoint.hpp"

namespace mavswitch {

Worker::Worker(Shared& shared, size_t index, routing::RoutingContext& context)
    : shared_(shared), index_(index), context_(context), resolver_(loop_), direct_(index) {
  loop_.on_iteration_end([this] { end_iteration(); });
  loop_.every(kTrimPeriod, [this] { trim_queues(); });
}

Worker::~Worker() { stop_and_join(); }

// Output storage a burst grew and the link has not needed since goes back (a fleet's peers all
// heard at once must not leave every queue at its high-water mark). The allocator keeps freed
// memory for reuse; when a trim frees much, it is asked to hand the pages back to the system
// too, so the process shrinks rather than holding its high-water mark (at most once a second,
// and only after a burst: pages touched again cost a fault each).
void Worker::trim_queues() {
  size_t released = direct_.trim();
  for (transport::Link* link : owned_) {
    if (link != nullptr) released += link->trim_queues();
  }
#ifdef __GLIBC__
  if (released >= kReturnToSystem) malloc_trim(0);
#endif
}

void Worker::run() {
  thread_id_ = std::this_thread::get_id();
  thread_id_.notify_all();
  // The first iteration ends as every iteration does: arm, then drain, so that a batch
  // published before this thread ran is not left waiting for a wake-up.
  loop_.wake();
  loop_.run();
  armed_.store(false);
  thread_id_ = std::thread::id{};
}

void Worker::start_thread() {
  thread_ = std::thread([this] { run(); });
}

void Worker::stop_and_join() {
  if (!thread_.joinable()) return;
  loop_.stop();
  thread_.join();
}

const protocol::MessageTable& Worker::message_table() const { return shared_.table; }

void Worker::link_up(transport::Link& link) {
  MAVSWITCH_ASSERT_OWNER(loop_, "Worker::link_up");
  std::unique_ptr<DirectTarget> direct;
  if (workers_.size() > 1 && !link.shaped()) {  // a shaped link's frames all pass its own thread
    if (auto w = link.direct_write()) direct = std::make_unique<DirectTarget>(std::move(*w));
  }
  const auto policy = policies_.find(&link.endpoint());
  if (policy == policies_.end()) throw std::logic_error("Worker::link_up: an endpoint this worker does not run");
  const std::string& endpoint = link.endpoint().spec().name;
  std::string name = endpoint.empty() ? link.peer() : endpoint + " " + link.peer();
  const routing::LinkId id = shared_.routing.add_link(policy->second, [&](routing::LinkId added) {
    shared_.links.open(added, static_cast<uint32_t>(index_), link, std::move(direct), std::move(name));
  });
  link.id = id;
  if (id >= owned_.size()) owned_.resize(id + 1, nullptr);
  owned_[id] = &link;
}

void Worker::link_down(transport::Link& link) {
  MAVSWITCH_ASSERT_OWNER(loop_, "Worker::link_down");
  if (link.id >= owned_.size() || owned_[link.id] != &link) return;
  if (shared_.rate_requests.gone)
    workers_[0]->loop().post([shared = &shared_, id = link.id] { shared->rate_requests.gone(id); });
  link.endpoint().retire(counters_of(link), link.parser_stats());
  // The record first: once routing has the id back, another worker may take it.
  std::unique_ptr<DirectTarget> direct = shared_.links.close(link.id);
  owned_[link.id] = nullptr;
  shared_.routing.remove_link(link.id);
  if (direct) retired_.emplace_back(shared_.epochs.retire(), std::move(direct));
  std::erase(to_flush_, &link);
  link.id = routing::kNoLink;
}

void Worker::adopt(const transport::Endpoint& endpoint, std::shared_ptr<const routing::LinkPolicy> policy) {
  MAVSWITCH_ASSERT_OWNER(loop_, "Worker::adopt");
  policies_[&endpoint] = std::move(policy);
}

void Worker::close(transport::Endpoint& endpoint) {
  MAVSWITCH_ASSERT_OWNER(loop_, "Worker::close");
  std::vector<transport::Link*> links;
  // The endpoint's links are this worker's to take down; for_each_link only lends them const.
  endpoint.for_each_link([&](const transport::Link& l) { links.push_back(const_cast<transport::Link*>(&l)); });
  for (transport::Link* l : links) link_down(*l);
  policies_.erase(&endpoint);
}

const routing::SequenceTracker* Worker::sequences(routing::LinkId id) const {
  const LinkRecord* r = own(id);
  return r != nullptr ? r->sequences.get() : nullptr;
}

const RadioReport* Worker::radio(routing::LinkId id) const {
  const LinkRecord* r = own(id);
  return r != nullptr && r->radio.reports != 0 ? &r->radio : nullptr;
}

transport::LinkCounters Worker::counters_of(const transport::Link& link) const {
  transport::LinkCounters c = link.counters();
  if (const DirectTarget* d = direct_target(link.id)) {
    // relaxed: a count for statistics; nothing else is published through it.
    c.frames_out += d->frames_out.load(std::memory_order_relaxed);
    c.bytes_out += d->bytes_out.load(std::memory_order_relaxed);
    c.dropped_queue_full += d->dropped.load(std::memory_order_relaxed);
  }
  return c;
}

const DirectTarget* Worker::direct_target(routing::LinkId id) const {
  const LinkRecord* r = own(id);
  return r != nullptr ? r->published.get() : nullptr;
}

// Inlined into frame_in(), the per-frame path, and into route() for the components' frames.
[[gnu::always_inline]] inline void Worker::route_here(routing::LinkId from, const protocol::FrameView& frame) {
  routing::Routing& routing = shared_.routing;
  if (routing.verifies_signing(from)) context_.set_signing_now(protocol::signing_timestamp_now());
  const routing::LinkId outer = source_;  // a deferred frame is routed inside another's route_here
  source_ = from;
  deciding_ = true;
  if (log::tracing()) [[unlikely]] {
    route_traced(from, frame);
  } else {
    routing.route(context_, from, frame, loop_.now());
    for (const routing::LinkId to : context_.destinations()) deliver(to, frame);
  }
  if (!remote_owners_.empty()) hand_over_gathered(frame);
  if (!shared_.taps.empty()) tap(frame);
  deciding_ = false;
  if (!deferred_.empty() && !routing_deferred_) [[unlikely]]
    route_deferred();
  source_ = outer;
}

routing::LinkId Worker::source() const {
  MAVSWITCH_ASSERT_OWNER(loop_, "Worker::source");
  return source_;
}

// DebugLogLevel = trace: every decision, one line each, with what was dropped and why. Its own
// copy of the decision, so that the common one carries nothing for it.
void Worker::route_traced(routing::LinkId from, const protocol::FrameView& frame) {
  const routing::Verdict verdict = shared_.routing.route(context_, from, frame, loop_.now());
  const std::vector<routing::LinkId> to(context_.destinations().begin(), context_.destinations().end());
  for (const routing::LinkId link : to) deliver(link, frame);
  const auto name = frame.info() != nullptr ? frame.info()->name : std::string_view("unknown id");
  log::trace("route: {}/{} {} (#{}) seq {} from link {}: {}{}{}", frame.sysid(), frame.compid(), name, frame.msgid(),
             frame.seq(), from, routing::verdict_name(verdict), to.empty() ? "" : " to links ", fmt::join(to, ", "));
}

// Frames handlers sent while others were being routed, in the order sent. Each may bring more
// (a component answering an answer); past kMaxDeferred in one go, two components answering
// each other without end are cut off rather than allowed to hold the worker.
constexpr size_t kMaxDeferred = 4096;

void Worker::route_deferred() {
  routing_deferred_ = true;
  size_t routed = 0, dropped = 0;
  while (!deferred_.empty()) {
    Deferred d = std::move(deferred_.front());
    deferred_.pop_front();
    if (routed == kMaxDeferred) {
      ++dropped;
      continue;
    }
    ++routed;
    route_here(d.from, d.shape.over(d.bytes.data()));
  }
  routing_deferred_ = false;
  if (dropped > 0) {
    log::warning(
        "{} frames sent from handlers dropped: more than {} in answer to one frame (handlers answering "
        "each other without end?)",
        dropped, kMaxDeferred);
  }
}

void Worker::frame_in(transport::Link& link, const protocol::FrameView& frame) {
  if (link.id >= owned_.size()) return;
  if (deciding_) [[unlikely]] {  // sent by a component's handler this decision called: after it
    deferred_.push_back({link.id, frame, {frame.bytes().begin(), frame.bytes().end()}});
    return;
  }
  LinkRecord& here = shared_.links.at(link.id);  // this worker's: the link is
  using Path = transport::Link::Path;
  if (link.path() == Path::kWire) [[likely]] {
    here.sequences->record(frame.sysid(), frame.compid(), frame.seq());
    if (frame.msgid() == msg::RadioStatus::kId) [[unlikely]]  // the radio on this link; routed on as well
      here.radio = {msg::RadioStatus::decode(frame.payload()), loop_.now(), here.radio.reports + 1};
  }
  // Two compares on every frame; the rest only for the few messages rates/ named.
  const RateRequests& rates = shared_.rate_requests;
  if (frame.msgid() - rates.first_id <= rates.last_id - rates.first_id && rates.is != nullptr) [[unlikely]] {
    // A link that may not command asks no rates either: its request is dropped as a command.
    if (link.endpoint().spec().message_rates && rates.is(frame) && !shared_.routing.denies_commands(link.id)) {
      take_rate_request(link.id, frame);
      return;
    }
  }
  route_here(link.id, frame);
}

// Not routed: the router's message rates (rates/) answer it, on the router's thread.
void Worker::take_rate_request(routing::LinkId from, const protocol::FrameView& frame) {
  workers_[0]->loop().post(
      [shared = &shared_, from, bytes = std::vector<uint8_t>(frame.bytes().begin(), frame.bytes().end())] {
        shared->rate_requests.take(from, protocol::view_checked(shared->table, bytes));
      });
}

void Worker::wish(routing::LinkId id, uint8_t sysid, uint8_t compid, uint32_t msgid, int64_t interval_us) {
  MAVSWITCH_ASSERT_OWNER(loop_, "Worker::wish");
  LinkRecord* r = own(id);
  if (r == nullptr) return;  // gone meanwhile
  r->link->wish(sysid, compid, msgid, interval_us);
  // Other workers stop writing to it themselves: it is shaped now.
  if (std::unique_ptr<DirectTarget> direct = shared_.links.withdraw_direct(id))
    retired_.emplace_back(shared_.epochs.retire(), std::move(direct));
}

void Worker::send_alone(routing::LinkId to, const protocol::FrameView& frame) {
  MAVSWITCH_ASSERT_OWNER(loop_, "Worker::send_alone");
  if (shared_.routing.signs_out(to))
    deliver_signed(to, frame);
  else
    send(to, frame, frame.bytes());
}

void Worker::deliver(routing::LinkId to, const protocol::FrameView& frame) {
  if (shared_.routing.signs_out(to)) [[unlikely]] {
    deliver_signed(to, frame);
    return;
  }
  const LinkRecord& place = shared_.links.at(to);
  // relaxed: set before the link is routable; Routing::add_link publishes it (release).
  const uint32_t owner = place.owner.load(std::memory_order_relaxed);
  if (owner == index_) {
    write_here(to, frame, frame.bytes());
  } else if (const DirectTarget* direct = place.direct.load()) {
    direct_.queue(to, *direct, frame.bytes());
  } else {
    // Gathered per owner while the decision runs: one ring record each, whatever the fan-out.
    auto& ids = remote_[owner];
    if (ids.empty()) remote_owners_.push_back(owner);
    ids.push_back(to);
  }
}

// Out of line: its frame-sized buffer and the signing stay off the common path.
void Worker::deliver_signed(routing::LinkId to, const protocol::FrameView& frame) {
  const routing::LinkPolicy* policy = shared_.routing.find_policy(to);
  if (policy == nullptr) return;  // its owner just closed it
  const auto& gate = *policy->signing;
  uint8_t signed_frame[protocol::kMaxFrameLen];
  const size_t n =
      protocol::sign_frame(frame, gate.key(), gate.policy().link_id, shared_.next_signing_timestamp(), signed_frame);
  // MAVLink 1 cannot be signed: it goes as it is, and the peer's own policy decides.
  policy->signing->count_out(n != 0);
  send(to, frame, n != 0 ? std::span<const uint8_t>{signed_frame, n} : frame.bytes());
}

void Worker::send(routing::LinkId to, const protocol::FrameView& frame, std::span<const uint8_t> bytes) {
  const LinkRecord& place = shared_.links.at(to);
  // relaxed: set before the link is routable; Routing::add_link publishes it (release).
  const uint32_t owner = place.owner.load(std::memory_order_relaxed);
  if (owner == index_) {
    write_here(to, frame, bytes);
  } else if (const DirectTarget* direct = place.direct.load()) {
    direct_.queue(to, *direct, bytes);
  } else {
    hand_over(owner, std::span<const routing::LinkId>(&to, 1), frame, bytes);
  }
}

void Worker::write_here(routing::LinkId to, const protocol::FrameView& frame, std::span<const uint8_t> bytes) {
  if (to >= owned_.size()) return;
  if (transport::Link* link = owned_[to]) link->send(frame, bytes);
}

void Worker::end_iteration() {
  if (workers_.size() > 1) exchange_batches();   // one worker: no rings, no handshake
  flush_pending();                               // then one write per link that has output
  if (workers_.size() > 1) end_direct_writes();  // last: draining above may deliver to components, which may send
  if (loop_.holding_input()) pause_.resume_when_room(loop_);
  // What runs here may ask for more (a component sends, a link gathers a batch): it runs too.
  while (!at_end_.empty()) [[unlikely]] {
      std::vector<std::function<void()>> due;
      due.swap(at_end_);
      for (auto& f : due) f();
    }
}

void Worker::at_iteration_end(std::function<void()> f) {
  MAVSWITCH_ASSERT_OWNER(loop_, "Worker::at_iteration_end");
  at_end_.push_back(std::move(f));
}

void Worker::needs_flush(transport::Link& link) {
  link.flush_pending = true;
  to_flush_.push_back(&link);
}

void Worker::flush_pending() {
  MAVSWITCH_ASSERT_OWNER(loop_, "Worker::flush_pending");
  // A flush may close a link (write error), which removes it from to_flush_: work on a copy.
  static thread_local std::vector<transport::Link*> batch;
  batch.swap(to_flush_);
  for (transport::Link* l : batch) {
    l->flush_pending = false;
    l->flush();
  }
  batch.clear();
}

}  // namespace mavswitch
