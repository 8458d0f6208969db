#include "transport/link.hpp"

#include <algorithm>

#include "transport/endpoint.hpp"
#include "transport/event_loop.hpp"
#include "transport/pacer.hpp"
#include "transport/rate_limit.hpp"

namespace mavswitch::transport {

namespace {
// How long a stream stalled on a likely false start must stay quiet before the candidate is
// given up. A real frame's bytes follow each other closely (280 bytes take 49 ms at 57,600
// baud); a header torn by noise is never completed, and the frames behind it should not wait
// for the next 280 bytes (seconds on a 1 Hz stream).
constexpr Millis kFalseStartQuiet = 250;
}  // namespace

struct Link::Shaping {
  std::optional<RateLimiter> in, out;
  StreamWishes wishes;  // what its peer asked for (the router's message rates)
  std::optional<Pacer> pacer;
  EventLoop::TimerId release_timer = 0;
};

Link::Link(Endpoint& endpoint, LinkHost& host, std::string peer)
    : host_(host), endpoint_(endpoint), peer_(std::move(peer)), parser_(host.message_table()), last_rx_(now_ms()) {
  const EndpointSpec& spec = endpoint.spec();
  if (!spec.rate_in.empty() || !spec.rate_out.empty() || spec.max_rate > 0) {
    shaping_ = std::make_unique<Shaping>();
    if (!spec.rate_in.empty()) shaping_->in.emplace(spec.rate_in);
    if (!spec.rate_out.empty()) shaping_->out.emplace(spec.rate_out);
    if (spec.max_rate > 0) shaping_->pacer.emplace(static_cast<uint64_t>(spec.max_rate), spec.max_delay);
  }
  viewed_ = shaping_ != nullptr;
}

Link::~Link() {
  if (resync_timer_ != 0) host_.loop().cancel(resync_timer_);
  if (shaping_ && shaping_->release_timer != 0) host_.loop().cancel(shaping_->release_timer);
}

size_t Link::paced_bytes() const noexcept { return shaping_ && shaping_->pacer ? shaping_->pacer->held_bytes() : 0; }

void Link::pace(uint64_t bytes_per_second) {
  if (bytes_per_second == 0) {
    if (shaping_) shaping_->pacer.reset();
    return;
  }
  if (!shaping_) shaping_ = std::make_unique<Shaping>();
  viewed_ = true;
  if (shaping_->pacer)
    shaping_->pacer->set_rate(bytes_per_second);
  else
    shaping_->pacer.emplace(bytes_per_second, endpoint_.spec().max_delay);
}

void Link::wish(uint8_t sysid, uint8_t compid, uint32_t msgid, int64_t interval_us) {
  MAVSWITCH_ASSERT_OWNER(host_.loop(), "Link::wish");
  if (!shaping_) shaping_ = std::make_unique<Shaping>();
  viewed_ = true;
  shaping_->wishes.set(sysid, compid, msgid, interval_us);
}

void Link::frame_parsed(const protocol::FrameView& f) {
  ++counters_.frames_in;
  if (shaping_ && shaping_->in && !shaping_->in->admit(f, now_us())) [[unlikely]] {
    ++counters_.rate_limited_in;
    return;
  }
  host_.frame_in(*this, f);
}

bool Link::send_viewed(const protocol::FrameView& frame, std::span<const uint8_t> bytes) {
  if (takes_views_) return take(frame, bytes);
  return shaping_ == nullptr ? send(bytes) : send_shaped(frame, bytes);
}

bool Link::send_shaped(const protocol::FrameView& f, std::span<const uint8_t> bytes) {
  MAVSWITCH_ASSERT_OWNER(host_.loop(), "Link::send_shaped");
  Shaping& s = *shaping_;
  uint8_t told[protocol::kMaxFrameLen];
  if (!s.wishes.empty()) {
    if (!s.wishes.admit(f, now_us())) {
      ++counters_.rate_thinned;
      return false;
    }
    bytes = s.wishes.tell_own(f, bytes, told);  // a component's MESSAGE_INTERVAL: the rate this peer gets
  }
  if (s.out && !s.out->admit(f, now_us())) {
    ++counters_.rate_limited_out;
    return false;
  }
  if (!s.pacer) return send(bytes);
  const bool queued = s.pacer->push(protocol::classify(f), protocol::stream_key(f), bytes, now_ms());
  if (s.release_timer == 0) release_paced();  // else the timer is due when the budget allows
  counters_.superseded = s.pacer->counts().superseded;
  counters_.paced_drops = s.pacer->counts().dropped;
  return queued;
}

// What the budget allows now goes to the link's queue; the rest waits for a timer.
void Link::release_paced() {
  Shaping& s = *shaping_;
  s.release_timer = 0;
  if (!s.pacer) return;
  const Millis wait = s.pacer->release(now_ms(), [this](std::span<const uint8_t> b) { send(b); });
  counters_.paced_drops = s.pacer->counts().dropped;
  if (wait > 0) s.release_timer = host_.loop().after(wait, [this] { release_paced(); });
}

bool Link::send(std::span<const uint8_t> frame) {
  MAVSWITCH_ASSERT_OWNER(host_.loop(), "Link::send");
  if (!enqueue(frame)) [[unlikely]]
    return send_when_full(frame);
  if (!flush_pending) host_.needs_flush(*this);
  return true;
}

// More frames can arrive for one link in one loop iteration than its queue holds (a worker
// draining what another routed to it while it was descheduled, a burst of large reads), so
// write what is queued now and try again: the frame is lost only when the kernel will not take
// more either, that is when the peer is really not keeping up. Out of line: the common path
// stays a copy and a flag.
bool Link::send_when_full(std::span<const uint8_t> frame) {
  if (write_blocked_ || (flush(), !enqueue(frame))) {
    ++counters_.dropped_queue_full;
    return false;
  }
  if (!flush_pending) host_.needs_flush(*this);
  return true;
}

void Link::received(std::span<const uint8_t> bytes, bool end_of_burst) {
  MAVSWITCH_ASSERT_OWNER(host_.loop(), "Link::received");
  counters_.bytes_in += bytes.size();
  last_rx_ = now_ms();
  auto sink = [this](const protocol::FrameView& f) { frame_parsed(f); };
  if (!bytes.empty()) parser_.feed(bytes, sink);
  if (end_of_burst) {
    parser_.flush(sink);
    if (resync_timer_ == 0 && parser_.stalled_on_false_start()) watch_false_start();
  }
}

void Link::watch_false_start() {
  const Millis quiet_for = now_ms() - last_rx_;
  resync_timer_ = host_.loop().after(std::max<Millis>(1, kFalseStartQuiet - quiet_for), [this] {
    resync_timer_ = 0;
    if (!parser_.stalled_on_false_start()) return;
    if (now_ms() - last_rx_ < kFalseStartQuiet) {  // bytes came meanwhile: wait for quiet
      watch_false_start();
      return;
    }
    parser_.drop_false_start([this](const protocol::FrameView& f) { frame_parsed(f); });
  });
}

void Link::received_end() {
  MAVSWITCH_ASSERT_OWNER(host_.loop(), "Link::received_end");
  parser_.finish([this](const protocol::FrameView& f) { frame_parsed(f); });
}

void Link::received_datagram(std::span<const uint8_t> datagram) {
  MAVSWITCH_ASSERT_OWNER(host_.loop(), "Link::received_datagram");
  counters_.bytes_in += datagram.size();
  last_rx_ = now_ms();
  auto sink = [this](const protocol::FrameView& f) { frame_parsed(f); };
  parser_.feed(datagram, sink);
  parser_.finish(sink);  // frames never span datagrams
}

void Link::received_frame(const protocol::FrameView& frame) {
  MAVSWITCH_ASSERT_OWNER(host_.loop(), "Link::received_frame");
  counters_.bytes_in += frame.size();
  last_rx_ = now_ms();
  frame_parsed(frame);
}

}  // namespace mavswitch::transport
