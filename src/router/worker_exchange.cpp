// What crosses between workers, each in one way: frames for another worker's stream links and
// components through its FrameHandover (one record per frame and owner, one publish per
// iteration, one wake-up for a sleeping consumer), the taps' frames through worker 0's tap
// handovers, and the epochs that say when a DirectTarget other workers read may be freed.
#include <algorithm>

#include "router/router.hpp"
#include "router/worker.hpp"

namespace mavswitch {

void Worker::connect(const std::vector<Worker*>& all) {
  workers_ = all;
  if (all.size() > 1) {
    // Asleep, a worker holds no DirectTarget; awake, it drains at its iteration's end, so a
    // producer need not wake it.
    loop_.on_sleep([this] { shared_.epochs.idle(index_); },
                   [this] {
                     shared_.epochs.announce(index_);
                     // relaxed: a hint; awake, the worker drains at its iteration's end, so a stale value costs a spare
                     // wake.
                     armed_.store(false, std::memory_order_relaxed);
                   });
  }
  // A batch handed to this worker rings it only if it sleeps (armed_); awake, it drains at
  // its iteration's end anyway.
  const auto ring = [this] {
    if (armed_.exchange(false)) loop_.wake();
  };
  inbound_.resize(all.size());
  for (size_t w = 0; w < all.size(); ++w) {
    if (w != index_) inbound_[w] = std::make_unique<FrameHandover>(ring);
  }
  if (index_ == 0) {
    tap_inbound_.resize(all.size());
    for (size_t w = 1; w < all.size(); ++w) tap_inbound_[w] = std::make_unique<FrameHandover>(ring);
  }
}

void Worker::connect_outbound() {
  outbound_.assign(workers_.size(), nullptr);
  remote_.assign(workers_.size(), {});
  for (size_t w = 0; w < workers_.size(); ++w) {
    if (w == index_) continue;
    outbound_[w] = workers_[w]->inbound_[index_].get();
    pause_.watch(outbound_[w]);
  }
  if (index_ != 0) {
    tap_outbound_ = workers_[0]->tap_inbound_[index_].get();
    pause_.watch(tap_outbound_);
  }
}

void Worker::hand_over_gathered(const protocol::FrameView& frame) {
  for (const uint32_t owner : remote_owners_) {
    auto& ids = remote_[owner];
    for (size_t i = 0; i < ids.size(); i += FrameHandover::kMaxDestinations) {
      const size_t n = std::min(FrameHandover::kMaxDestinations, ids.size() - i);
      hand_over(owner, std::span<const routing::LinkId>(ids).subspan(i, n), frame, frame.bytes());
    }
    ids.clear();
  }
  remote_owners_.clear();
}

void Worker::hand_over(size_t owner, std::span<const routing::LinkId> to, const protocol::FrameView& frame,
                       std::span<const uint8_t> bytes) {
  MAVSWITCH_ASSERT_OWNER(loop_, "Worker::hand_over");  // the handover's one producer
  if (!outbound_[owner]->push(to, frame, bytes, source_)) handover_drops_ += to.size();
}

// Taps run on worker 0 only, so a telemetry log needs no lock: the other workers pass it the
// frames they received on their tap handovers.
void Worker::tap(const protocol::FrameView& frame) {
  if (index_ == 0) {
    shared_.run_taps(frame);
  } else if (!tap_outbound_->push({}, frame, frame.bytes())) {
    ++handover_drops_;
  }
}

void Worker::end_direct_writes() {
  direct_.flush();
  shared_.epochs.announce(index_);
  if (retired_.empty()) return;
  std::erase_if(retired_, [&](const auto& r) { return shared_.epochs.safe(r.first); });
}

void Worker::exchange_batches() {
  MAVSWITCH_ASSERT_OWNER(loop_, "Worker::exchange_batches");
  // 1. What this worker handed over becomes visible; a consumer that sleeps is rung, once.
  for (FrameHandover* out : outbound_) {
    if (out != nullptr) out->publish();
  }
  if (tap_outbound_ != nullptr) tap_outbound_->publish();
  // 2. Arm before draining: a batch handed over after the drain took will ring us (the
  // handover's lock orders this store before that ring's exchange).
  armed_.store(true);
  drain_inbound();
}

void Worker::drain_inbound() {
  MAVSWITCH_ASSERT_OWNER(loop_, "Worker::drain_inbound");
  for (size_t w = 0; w < inbound_.size(); ++w) {
    if (!inbound_[w]) continue;
    const bool room_wanted =
        inbound_[w]->drain([&](routing::LinkId to, const protocol::FrameView& frame, routing::LinkId from) {
          source_ = from;  // a component it reaches asks where it came from
          write_here(to, frame, frame.bytes());
        });
    source_ = routing::kNoLink;
    // A tap handover drained too: its producer may wait for room on either.
    const bool tap_room_wanted =
        w < tap_inbound_.size() && tap_inbound_[w] &&
        tap_inbound_[w]->drain_frames([&](const protocol::FrameView& frame) { shared_.run_taps(frame); });
    if (room_wanted || tap_room_wanted) workers_[w]->loop_.wake();  // it holds its input until we make room
  }
}

}  // namespace mavswitch
