#include "transport/link.hpp"

#include "transport/event_loop.hpp"

namespace mavswitch::transport {

Link::Link(Endpoint& endpoint, LinkHost& host, std::string peer)
    : host_(host), endpoint_(endpoint), peer_(std::move(peer)), parser_(host.message_table()), last_rx_(now_ms()) {}

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
  auto sink = [this](const protocol::FrameView& f) {
    ++counters_.frames_in;
    host_.frame_in(*this, f);
  };
  if (!bytes.empty()) parser_.feed(bytes, sink);
  if (end_of_burst) parser_.flush(sink);
}

void Link::received_datagram(std::span<const uint8_t> datagram) {
  MAVSWITCH_ASSERT_OWNER(host_.loop(), "Link::received_datagram");
  counters_.bytes_in += datagram.size();
  last_rx_ = now_ms();
  auto sink = [this](const protocol::FrameView& f) {
    ++counters_.frames_in;
    host_.frame_in(*this, f);
  };
  parser_.feed(datagram, sink);
  parser_.finish(sink);  // frames never span datagrams
}

}  // namespace mavswitch::transport
