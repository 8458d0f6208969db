#include "router/direct_writer.hpp"

namespace mavswitch {

void DirectWriter::queue(routing::LinkId to, const DirectTarget& target, std::span<const uint8_t> frame) {
  if (to >= by_link_.size()) by_link_.resize(to + 1);
  Pending& p = by_link_[to];
  if (p.target != &target) [[unlikely]] {
    if (p.target != nullptr) {
      send(p);  // the id now names another link: what was queued goes to the one it was for
    } else {
      pending_.push_back(to);
    }
    const transport::DirectWrite& w = target.write;
    if (!p.queue) p.queue = std::make_unique<transport::DatagramQueue>(w.queue_frames, w.coalesce, w.segment);
    p.target = &target;
  }
  if (!p.queue->push(frame)) [[unlikely]] {
    send(p);  // full within one iteration: write it out and go on
    if (!p.queue->push(frame)) target.dropped.fetch_add(1, std::memory_order_relaxed);
  }
}

void DirectWriter::send(Pending& p) {
  const transport::DirectWrite& w = p.target->write;
  uint64_t frames = 0, bytes = 0;
  for (;;) {
    const transport::WriteResult r = p.queue->send_to(w.fd, &w.to, &frames, &bytes);
    // An unreachable peer (an ICMP error on the socket) cost one datagram; go on with the rest.
    if (r == transport::WriteResult::kError && !p.queue->empty()) continue;
    if (r == transport::WriteResult::kBlocked) {
      // The socket's buffer is full. Waiting for it is the owner's business; what this worker
      // queued would outlive the iteration its target is good for, so it is dropped, counted.
      p.target->dropped.fetch_add(p.queue->size(), std::memory_order_relaxed);
      p.queue->clear();
    }
    break;
  }
  if (frames != 0) {
    p.target->frames_out.fetch_add(frames, std::memory_order_relaxed);
    p.target->bytes_out.fetch_add(bytes, std::memory_order_relaxed);
    written_.fetch_add(frames, std::memory_order_relaxed);
  }
}

void DirectWriter::flush() {
  for (const routing::LinkId to : pending_) {
    Pending& p = by_link_[to];
    send(p);
    p.target = nullptr;
  }
  pending_.clear();
}

}  // namespace mavswitch
