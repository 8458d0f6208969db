#include "router/worker.hpp"

#include <algorithm>

#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <time.h>

#include "base/log.hpp"
#include "protocol/signing.hpp"
#include "router/router.hpp"

namespace mavswitch {

Worker::Worker(Router& router, size_t index, routing::RoutingContext& context)
    : router_(router), index_(index), context_(context), resolver_(loop_), direct_(index) {
  loop_.on_iteration_end([this] { end_iteration(); });
  loop_.every(kTrimPeriod, [this] {
    trim_queues();
    measure_busy();
  });
}

void Worker::measure_busy() {
  timespec cpu{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) != 0) return;
  const int64_t cpu_ns = int64_t{cpu.tv_sec} * 1'000'000'000 + cpu.tv_nsec;
  const transport::Millis now = transport::now_ms();
  if (busy_measured_at_ != 0 && now > busy_measured_at_) {
    busy_.store(static_cast<double>(cpu_ns - busy_cpu_ns_) / (static_cast<double>(now - busy_measured_at_) * 1e6),
                std::memory_order_relaxed);
  }
  busy_measured_at_ = now;
  busy_cpu_ns_ = cpu_ns;
}

std::vector<uint16_t> Worker::sources_heard(const transport::Link& link) const {
  std::vector<uint16_t> keys;
  if (const routing::SequenceTracker* s = sequences(link.id)) {
    for (const auto& [key, source] : s->sources()) keys.push_back(key);
  }
  return keys;
}

void Worker::inherit_sources(transport::Link& link, std::span<const uint16_t> sources) {
  const transport::Millis now = loop_.now();
  for (const uint16_t key : sources) {
    router_.routing_.learn_source(link.id, static_cast<uint8_t>(key >> 8), static_cast<uint8_t>(key & 0xFF), now);
  }
}

// Output storage a burst grew and the link has not needed since goes back (a fleet's peers all
// heard at once must not leave every queue at its high-water mark). The allocator keeps freed
// memory for reuse; when a trim frees much, it is asked to hand the pages back to the system
// too, so the process shrinks rather than holding its high-water mark (at most once a second,
// and only after a burst: pages touched again cost a fault each).
void Worker::trim_queues() {
  size_t released = direct_.trim();
  for (Destination& d : links_) {
    if (d.wire != nullptr) released += d.wire->trim_queues();
  }
#ifdef __GLIBC__
  if (released >= kReturnToSystem) malloc_trim(0);
#endif
}

Worker::~Worker() { stop_and_join(); }

void Worker::connect(const std::vector<Worker*>& all) {
  peers_ = all;
  if (all.size() > 1) {  // alone, nobody else ever takes the lock: it is simply held throughout
    loop_.on_sleep([this] {
                     router_.epochs_.idle(index_);
                     active_.unlock();
                   },
                   [this] {
                     active_.lock();
                     router_.epochs_.announce(index_);
                     // Awake: a producer need not serve or wake us; we drain at iteration end.
                     armed_.store(false, std::memory_order_relaxed);
                   });
  }
  inbound_.resize(all.size());
  for (size_t w = 0; w < all.size(); ++w) {
    if (w != index_) inbound_[w] = std::make_unique<FrameRing>();
  }
}

void Worker::connect_outbound() {
  outbound_.assign(peers_.size(), nullptr);
  remote_.assign(peers_.size(), {});
  for (size_t w = 0; w < peers_.size(); ++w) {
    if (w != index_) outbound_[w] = peers_[w]->inbound_[index_].get();
  }
}

void Worker::run() {
  thread_id_ = std::this_thread::get_id();
  thread_id_.notify_all();
  {
    std::lock_guard awake(active_);  // released only while the loop sleeps
    stopped_ = false;
    router_.epochs_.announce(index_);
    // As before every sleep: arm, then look, so that a batch published before we ran is not
    // left waiting for a wake-up.
    armed_.store(true);
    drain_inbound();
    flush_pending();
    measure_busy();  // from here: the first period's share is known a second in
    loop_.run();
    stopped_ = true;  // nobody serves this worker from now on
    armed_.store(false);
  }
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

const protocol::MessageTable& Worker::message_table() const { return *router_.table_; }

Worker::Destination& Worker::slot(routing::LinkId id) {
  if (id >= links_.size()) links_.resize(id + 1);
  return links_[id];
}

void Worker::link_up(transport::Link& link) {
  std::unique_ptr<DirectTarget> direct;
  if (peers_.size() > 1) {
    if (auto w = link.direct_write()) direct = std::make_unique<DirectTarget>(std::move(*w));
  }
  const routing::LinkId id = router_.routing_.add_link(router_.policies_[link.endpoint().policy_index],
                                                       static_cast<uint32_t>(index_), direct.get());
  link.id = id;
  slot(id) = {&link, nullptr, std::make_unique<routing::SequenceTracker>(), std::move(direct)};
  wire_links_.fetch_add(1, std::memory_order_relaxed);
}

void Worker::link_down(transport::Link& link) {
  if (link.id >= links_.size() || links_[link.id].wire != &link) return;
  router_.routing_.remove_link(link.id);  // unpublishes its DirectTarget: retire it
  if (links_[link.id].direct) retired_.emplace_back(router_.epochs_.retire(), std::move(links_[link.id].direct));
  links_[link.id] = {};
  std::erase(to_flush_, &link);
  link.id = routing::kNoLink;
  wire_links_.fetch_sub(1, std::memory_order_relaxed);
}

void Worker::attach_local(routing::LinkId id, LocalLink& link) {
  slot(id) = {nullptr, &link, nullptr, nullptr};
  ++local_links_;
}

void Worker::detach_local(routing::LinkId id) {
  if (id < links_.size() && links_[id].local != nullptr) {
    links_[id] = {};
    --local_links_;
  }
}

const routing::SequenceTracker* Worker::sequences(routing::LinkId id) const {
  return id < links_.size() ? links_[id].sequences.get() : nullptr;
}

const DirectTarget* Worker::direct_target(routing::LinkId id) const {
  return id < links_.size() ? links_[id].direct.get() : nullptr;
}

// Inlined into frame_in(), the per-frame path, and into route() for the router's own frames.
[[gnu::always_inline]] inline void Worker::route_here(routing::LinkId from, const protocol::FrameView& frame) {
  routing::Routing& routing = router_.routing_;
  if (routing.verifies_signing(from)) context_.set_signing_now(protocol::signing_timestamp_now());
  deciding_ = true;
  routing.route(context_, from, frame, loop_.now(), [&](routing::LinkId to) { deliver(to, frame); });
  if (!remote_owners_.empty()) hand_to_owners(frame);
  if (!router_.taps_.empty()) tap(frame);
  deciding_ = false;
  if (!deferred_.empty() && !routing_deferred_) [[unlikely]] route_deferred();
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
    log::warning("{} frames sent from handlers dropped: more than {} in answer to one frame (handlers answering "
                 "each other without end?)",
                 dropped, kMaxDeferred);
  }
}

void Worker::frame_in(transport::Link& link, const protocol::FrameView& frame) {
  if (link.id >= links_.size()) return;
  links_[link.id].sequences->record(frame.sysid(), frame.compid(), frame.seq());
  route_here(link.id, frame);
}

void Worker::route(routing::LinkId from, const protocol::FrameView& frame) {
  if (deciding_) [[unlikely]] {  // sent from a handler this decision called: after it
    deferred_.push_back({from, frame, {frame.bytes().begin(), frame.bytes().end()}});
    return;
  }
  route_here(from, frame);
}

void Worker::deliver(routing::LinkId to, const protocol::FrameView& frame) {
  const routing::Routing::SendInfo dest = router_.routing_.send_info(to);
  if (dest.signs) [[unlikely]] {
    deliver_signed(to, dest, frame);
  } else if (dest.owner == index_) {
    hand_to_link(to, frame, frame.bytes());
  } else if (dest.direct != nullptr) {
    direct_.queue(to, *static_cast<const DirectTarget*>(dest.direct), frame.bytes());
  } else {
    // Gathered per owner while the decision runs: one ring record each, whatever the fan-out.
    auto& ids = remote_[dest.owner];
    if (ids.empty()) remote_owners_.push_back(dest.owner);
    ids.push_back(to);
  }
}

void Worker::hand_to_owners(const protocol::FrameView& frame) {
  for (const uint32_t owner : remote_owners_) {
    auto& ids = remote_[owner];
    for (size_t i = 0; i < ids.size(); i += FrameRing::kMaxDestinations) {
      const auto chunk = std::span<const routing::LinkId>(ids).subspan(i, std::min(FrameRing::kMaxDestinations, ids.size() - i));
      if (!outbound_[owner]->push(chunk, frame, frame.bytes())) ring_drops_ += chunk.size();
    }
    ids.clear();
  }
  remote_owners_.clear();
}

// Out of line: its frame-sized buffer and the signing stay off the common path.
void Worker::deliver_signed(routing::LinkId to, const routing::Routing::SendInfo& dest, const protocol::FrameView& frame) {
  const routing::LinkPolicy* policy = router_.routing_.find_policy(to);
  if (policy == nullptr) return;  // its owner just closed it
  const auto& gate = *policy->signing;
  uint8_t signed_frame[protocol::kMaxFrameLen];
  const size_t n = protocol::sign_frame(frame, gate.policy().key, gate.policy().link_id,
                                        router_.next_signing_timestamp(), signed_frame);
  // MAVLink 1 cannot be signed: it goes as it is, and the peer's own policy decides.
  policy->signing->count_out(n != 0);
  send(dest, to, frame, n != 0 ? std::span<const uint8_t>{signed_frame, n} : frame.bytes());
}

void Worker::send(const routing::Routing::SendInfo& dest, routing::LinkId to, const protocol::FrameView& frame,
                  std::span<const uint8_t> bytes) {
  if (dest.owner == index_) {
    hand_to_link(to, frame, bytes);
  } else if (dest.direct != nullptr) {
    direct_.queue(to, *static_cast<const DirectTarget*>(dest.direct), bytes);
  } else if (!outbound_[dest.owner]->push(to, frame, bytes)) {
    ++ring_drops_;
  }
}

void Worker::hand_to_link(routing::LinkId to, const protocol::FrameView& frame, std::span<const uint8_t> bytes) {
  if (to >= links_.size()) return;
  const Destination& d = links_[to];
  if (d.wire != nullptr) {
    d.wire->send(bytes);
  } else if (d.local != nullptr) {
    d.local->deliver(frame);
  }
}

// Taps run on worker 0 only, so a telemetry log needs no lock: the other workers pass it the
// frames they received.
void Worker::tap(const protocol::FrameView& frame) {
  if (index_ == 0) {
    router_.run_taps(frame);
  } else if (!outbound_[0]->push(kTapDestination, frame, frame.bytes())) {
    ++ring_drops_;
  }
}

void Worker::end_iteration() {
  if (peers_.size() > 1) exchange_batches();  // one worker: no rings, no handshake
  flush_pending();  // then one write per link that has output
  if (peers_.size() > 1) end_direct_writes();  // last: draining above may deliver to components, which may send
  if (loop_.holding_input()) resume_input_when_room();
}

void Worker::end_direct_writes() {
  direct_.flush();
  router_.epochs_.announce(index_);
  if (retired_.empty()) return;
  std::erase_if(retired_, [&](const auto& r) { return router_.epochs_.safe(r.first); });
}

void Worker::exchange_batches() {
  // 1. What this worker routed to others becomes visible; an idle consumer is served or woken.
  for (size_t w = 0; w < outbound_.size(); ++w) {
    if (outbound_[w] != nullptr && outbound_[w]->publish() && peers_[w]->armed_.exchange(false)) {
      hand_over(*peers_[w], outbound_[w]->pending_bytes());
    }
  }
  // 2. Arm before draining: a batch published after the drain looked will serve or wake us.
  armed_.store(true);
  drain_inbound();
}

// A small batch is cheaper to write than a wake-up of its worker; a large one is worth a
// wake-up, so that its writes run in parallel with this worker's next reads.
constexpr size_t kServeAtMostBytes = 4096;

void Worker::hand_over(Worker& peer, size_t batch_bytes) {
  if (batch_bytes <= kServeAtMostBytes && peer.active_.try_lock()) {
    // The peer sleeps and cannot wake into its state until we unlock. A stopped peer has
    // nothing to serve; one whose frames may reach user code that expects the router's thread
    // (components; taps unless added for any worker) must do that on its own thread.
    const bool stopped = peer.stopped_;
    const bool servable = !stopped && peer.local_links_ == 0 && (peer.index_ != 0 || !router_.taps_need_router_thread_);
    if (servable) {
      // What its iteration end would have done, ending as it does before sleeping: arm, then
      // look once more (a producer that found it disarmed while we drained relies on this).
      peer.drain_inbound();
      peer.armed_.store(true);
      peer.drain_inbound();
      peer.flush_pending();
      peer.served_asleep_.add_shared();
    }
    peer.active_.unlock();
    if (servable || stopped) return;
  }
  peer.loop_.wake();
}

void Worker::drain_inbound() {
  for (size_t w = 0; w < inbound_.size(); ++w) {
    if (!inbound_[w]) continue;
    const bool room_wanted = inbound_[w]->drain([&](routing::LinkId to, const protocol::FrameView& frame) {
      if (to == kTapDestination) {
        router_.run_taps(frame);
      } else {
        hand_to_link(to, frame, frame.bytes());
      }
    });
    if (room_wanted) peers_[w]->loop_.wake();  // it holds its input until we make room
  }
}

// While a queue to another worker is half full, this worker reads no more: the kernel's socket
// buffers (megabytes) hold a burst that the ring (256 KiB) would have to drop. The fd a reader
// stopped at is held back in the loop (not reported readable), so the worker sleeps rather than
// polling it; the consumer wakes it when its drain has made room. Meanwhile it still publishes
// what is queued and drains its own inbound rings, so two workers waiting on each other both
// make progress. A consumer that drains nothing for kMaxInputPause (stuck, say, in a
// component's callback on worker 0) is not waited for longer: this worker reads again, and what
// does not fit its ring is dropped and counted, so the links it serves for itself keep flowing.
constexpr transport::Millis kMaxInputPause = 200;

bool Worker::must_pause() {
  bool filling = false;
  for (FrameRing* ring : outbound_) filling = filling || (ring != nullptr && ring->filling());
  if (!filling) {
    paused_since_ = kNotPaused;
    return false;
  }
  if (paused_since_ == kNotPaused) {
    paused_since_ = loop_.now();
    ++input_pauses_;
  }
  return loop_.now() - paused_since_ < kMaxInputPause;
}

bool Worker::input_paused(int fd) {
  if (!must_pause()) return false;
  loop_.hold_input(fd);
  return true;
}

void Worker::resume_input_when_room() {
  // Ask first, then look: a consumer that drains after the look sees the request and wakes us.
  for (FrameRing* ring : outbound_) {
    if (ring != nullptr && ring->filling()) ring->want_room();
  }
  if (!must_pause()) {
    loop_.release_input();
    if (pause_timer_ != 0) {  // room came first: its wake-up is not needed
      loop_.cancel(pause_timer_);
      pause_timer_ = 0;
    }
    return;
  }
  if (pause_timer_ == 0) {  // and in any case when the pause runs out
    pause_timer_ = loop_.after(std::max<transport::Millis>(1, paused_since_ + kMaxInputPause - loop_.now()),
                               [this] { pause_timer_ = 0; });
  }
}

void Worker::needs_flush(transport::Link& link) {
  link.flush_pending = true;
  to_flush_.push_back(&link);
}

void Worker::flush_pending() {
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
