#include "window/foreign_link.hpp"

#include "transport/event_loop.hpp"

namespace mavswitch::daemon {

ForeignLink::ForeignLink(Router& router, std::string name, size_t max_queued_frames, std::function<void()> wake)
    : router_(router),
      name_(std::move(name)),
      max_queued_frames_(max_queued_frames),
      wake_(std::move(wake)),
      parser_(router.routing_table()) {}

ForeignLink::~ForeignLink() = default;

void ForeignLink::start(std::shared_ptr<const routing::LinkPolicy> policy) {
  router_.run_on_loop([&] { id_ = router_.attach_local(*this, std::move(policy)); });
}

void ForeignLink::received(std::span<const uint8_t> bytes) {
  bool post = false;
  {
    std::lock_guard lock(mutex_);
    if (closing_) return;
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
  MAVSWITCH_ASSERT_OWNER(router_.event_loop(), "ForeignLink::deliver");
  bool was_empty = false;
  {
    std::lock_guard lock(mutex_);
    if (closing_ || output_.size() >= max_queued_frames_) {
      ++counters_.dropped_queue_full;
      return;
    }
    was_empty = output_.empty();
    output_.emplace_back(bytes.begin(), bytes.end());
    queued_bytes_ += bytes.size();
  }
  if (was_empty) wake_();
}

void ForeignLink::take(Frames& out) {
  std::lock_guard lock(mutex_);
  out.swap(output_);
  queued_bytes_ = 0;
}

void ForeignLink::count_sent(uint64_t frames, uint64_t bytes) {
  std::lock_guard lock(mutex_);
  counters_.frames_out += frames;
  counters_.bytes_out += bytes;
}

void ForeignLink::close() {
  {
    std::lock_guard lock(mutex_);
    if (closing_) return;
    closing_ = true;
    closed_.store(true, std::memory_order_release);
    output_.clear();
    queued_bytes_ = 0;
  }
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
  MAVSWITCH_ASSERT_OWNER(router_.event_loop(), "ForeignLink::route_input");
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

}  // namespace mavswitch::daemon
