#include "transport/link.hpp"

#include <algorithm>

#include "transport/event_loop.hpp"

namespace mavswitch::transport {

namespace {
// How long a stream stalled on a likely false start must stay quiet before the candidate is
// given up. A real frame's bytes follow each other closely (280 bytes take 49 ms at 57,600
// baud); a header torn by noise is never completed, and the frames behind it should not wait
// for the next 280 bytes (seconds on a 1 Hz stream).
constexpr Millis kFalseStartQuiet = 250;
}  // namespace

Link::Link(Endpoint& endpoint, LinkHost& host, std::string peer)
    : host_(host), endpoint_(endpoint), peer_(std::move(peer)), parser_(host.message_table()), last_rx_(now_ms()) {}

Link::~Link() {
  if (resync_timer_ != 0) host_.loop().cancel(resync_timer_);
}

void Link::frame_parsed(const protocol::FrameView& f) {
  ++counters_.frames_in;
  host_.frame_in(*this, f);
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

}  // namespace mavswitch::transport
