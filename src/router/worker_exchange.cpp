// What crosses between workers, each in one way: frames for another worker's stream links and
// components through its FrameRing (one record per frame and owner, one publish per
// iteration, one wake-up for a sleeping consumer), the taps' frames through worker 0's tap
// rings, and the epochs that say when a DirectTarget other workers read may be freed.
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
  inbound_.resize(all.size());
  for (size_t w = 0; w < all.size(); ++w) {
    if (w != index_) inbound_[w] = std::make_unique<FrameRing>();
  }
  if (index_ == 0) {
    tap_inbound_.resize(all.size());
    for (size_t w = 1; w < all.size(); ++w) tap_inbound_[w] = std::make_unique<FrameRing>();
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
    for (size_t i = 0; i < ids.size(); i += FrameRing::kMaxDestinations) {
      const size_t n = std::min(FrameRing::kMaxDestinations, ids.size() - i);
      hand_over(owner, std::span<const routing::LinkId>(ids).subspan(i, n), frame, frame.bytes());
    }
    ids.clear();
  }
  remote_owners_.clear();
}

void Worker::hand_over(size_t owner, std::span<const routing::LinkId> to, const protocol::FrameView& frame,
                       std::span<const uint8_t> bytes) {
  MAVSWITCH_ASSERT_OWNER(loop_, "Worker::hand_over");  // the ring's one producer
  if (!outbound_[owner]->push(to, frame, bytes, source_)) ring_drops_ += to.size();
}

// Taps run on worker 0 only, so a telemetry log needs no lock: the other workers pass it the
// frames they received on their tap rings.
void Worker::tap(const protocol::FrameView& frame) {
  if (index_ == 0) {
    shared_.run_taps(frame);
  } else if (!tap_outbound_->push({}, frame, frame.bytes())) {
    ++ring_drops_;
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
  // 1. What this worker handed over becomes visible; a consumer that sleeps is woken, once.
  for (size_t w = 0; w < outbound_.size(); ++w) {
    bool published = outbound_[w] != nullptr && outbound_[w]->publish();
    if (w == 0 && tap_outbound_ != nullptr && tap_outbound_->publish()) published = true;
    if (published && workers_[w]->armed_.exchange(false)) workers_[w]->loop_.wake();
  }
  // 2. Arm before draining: a batch published after the drain looked will wake us.
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
    // A tap ring drained too: its producer may wait for room on either.
    const bool tap_room_wanted =
        w < tap_inbound_.size() && tap_inbound_[w] &&
        tap_inbound_[w]->drain_frames([&](const protocol::FrameView& frame) { shared_.run_taps(frame); });
    if (room_wanted || tap_room_wanted) workers_[w]->loop_.wake();  // it holds its input until we make room
  }
}

}  // namespace mavswitch
