#include "window/foreign_link.hpp"

#include <cassert>

namespace mavswitch::daemon {

ForeignLink::ForeignLink(Router& router, std::string name, size_t max_queued_frames)
    : router_(router), name_(std::move(name)), max_queued_frames_(max_queued_frames), parser_(router.routing_table()) {}

ForeignLink::~ForeignLink() { assert(!writer_.joinable() && "close() before the link goes"); }

void ForeignLink::start(std::shared_ptr<const routing::LinkPolicy> policy) {
  router_.run_on_loop([&] { id_ = router_.attach_local(*this, std::move(policy)); });
  writer_ = std::thread([self = shared_from_this()] { self->write_loop(); });
}

void ForeignLink::received(std::span<const uint8_t> bytes) {
  bool post = false;
  {
    std::lock_guard lock(mutex_);
    if (input_.size() + bytes.size() > kMaxPendingInput) {
      ++input_dropped_;
      return;
    }
    input_.insert(input_.end(), bytes.begin(), bytes.end());
    post = !drain_posted_;
    drain_posted_ = true;
  }
  if (post) router_.event_loop().post([self = shared_from_this()] { self->route_input(); });
}

void ForeignLink::deliver(const protocol::FrameView&, std::span<const uint8_t> bytes) {
  {
    std::lock_guard lock(mutex_);
    if (closing_ || output_.size() >= max_queued_frames_) {
      ++counters_.dropped_queue_full;
      return;
    }
    output_.emplace_back(bytes.begin(), bytes.end());
    queued_bytes_ += bytes.size();
  }
  wake_.notify_one();
}

void ForeignLink::close() {
  {
    std::lock_guard lock(mutex_);
    if (closing_) return;
    closing_ = true;
  }
  wake_.notify_one();
  if (writer_.joinable()) writer_.join();
  try {
    router_.run_on_loop([&] {
      if (id_ != routing::kNoLink) router_.detach_local(id_);
      id_ = routing::kNoLink;  // input still posted finds no link to come from
    });
  } catch (const Router::Stopped&) {  // the router is going anyway
  }
}

ForeignLinkReport ForeignLink::report() const {
  std::lock_guard lock(mutex_);
  ForeignLinkReport r{name_, counters_, parser_stats_, queued_bytes_};
  r.counters.dropped_queue_full += input_dropped_;
  return r;
}

void ForeignLink::route_input() {
  std::vector<uint8_t> bytes;
  {
    std::lock_guard lock(mutex_);
    bytes.swap(input_);
    drain_posted_ = false;
  }
  if (id_ == routing::kNoLink) return;
  uint64_t frames = 0;
  parser_.feed(bytes, [&](const protocol::FrameView& f) {
    ++frames;
    router_.route_local(id_, f);
  });
  std::lock_guard lock(mutex_);
  counters_.frames_in += frames;
  counters_.bytes_in += bytes.size();
  parser_stats_ = parser_.stats();
}

void ForeignLink::write_loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return closing_ || !output_.empty(); });
    if (closing_) return;
    std::deque<std::vector<uint8_t>> batch;
    batch.swap(output_);
    queued_bytes_ = 0;
    lock.unlock();
    uint64_t frames = 0, bytes = 0;
    bool failed = false;
    for (const auto& f : batch) {
      failed = write(f) == Written::kGone;
      if (failed) break;
      ++frames;
      bytes += f.size();
    }
    lock.lock();
    counters_.frames_out += frames;
    counters_.bytes_out += bytes;
    if (failed) return;  // the peer is going: close() follows
  }
}

}  // namespace mavswitch::daemon
