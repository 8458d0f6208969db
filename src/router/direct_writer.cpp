#include "router/direct_writer.hpp"

#include <algorithm>

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
    // A queue is kept for the id; one made for a link packed otherwise (the id named a link of
    // another endpoint) is made again.
    const transport::DirectWrite& w = target.write;
    const Shape shape{w.queue_frames, w.coalesce, w.segment};
    if (!p.queue || p.shape != shape) {
      p.queue = std::make_unique<transport::DatagramQueue>(w.queue_frames, w.coalesce, w.segment);
      p.shape = shape;
    }
    p.target = &target;
    p.used = true;
  }
  if (!p.queue->push(frame)) [[unlikely]] {
    send(p);  // full within one iteration: write it out and go on
    // relaxed: a count for statistics; nothing else is published through it.
    if (!p.queue->push(frame)) target.dropped.fetch_add(1, std::memory_order_relaxed);
  }
}

void DirectWriter::send(Pending& p) {
  transport::DatagramQueue::PeerSend one{p.queue.get(), &p.target->write.to};
  transport::DatagramQueue::send_all(p.target->write.fd_for(writer_), {&one, 1});
  account(p, one);
}

void DirectWriter::account(Pending& p, const transport::DatagramQueue::PeerSend& sent) {
  if (sent.result == transport::WriteResult::kBlocked) {
    // The socket's buffer is full. Waiting for it is the owner's business; what this worker
    // queued would outlive the iteration its target is good for, so it is dropped, counted.
    // relaxed: a count for statistics; nothing else is published through it.
    p.target->dropped.fetch_add(p.queue->size(), std::memory_order_relaxed);
    p.queue->clear();
  }
  if (sent.frames != 0) {
    p.target->frames_out.fetch_add(sent.frames, std::memory_order_relaxed);
    p.target->bytes_out.fetch_add(sent.bytes, std::memory_order_relaxed);
    // relaxed: a count for statistics; nothing else is published through it.
    written_.fetch_add(sent.frames, std::memory_order_relaxed);
  }
}

// Peers of one UDP server share its socket: their datagrams go out together, one sendmmsg for
// up to 64 of them, rather than one call per peer.
void DirectWriter::flush() {
  auto fd_of = [&](routing::LinkId id) { return by_link_[id].target->write.fd_for(writer_); };
  std::sort(pending_.begin(), pending_.end(),
            [&](routing::LinkId a, routing::LinkId b) { return fd_of(a) < fd_of(b); });
  for (size_t i = 0; i < pending_.size();) {
    const int fd = fd_of(pending_[i]);
    size_t end = i;
    sends_.clear();
    for (; end < pending_.size() && fd_of(pending_[end]) == fd; ++end) {
      const Pending& p = by_link_[pending_[end]];
      sends_.push_back({p.queue.get(), &p.target->write.to});
    }
    transport::DatagramQueue::send_all(fd, sends_);
    for (size_t k = i; k < end; ++k) {
      Pending& p = by_link_[pending_[k]];
      account(p, sends_[k - i]);
      p.target = nullptr;
    }
    i = end;
  }
  pending_.clear();
}

size_t DirectWriter::storage() const noexcept {
  size_t bytes = 0;
  for (const Pending& p : by_link_) {
    if (p.queue) bytes += p.queue->allocated_bytes();
  }
  return bytes;
}

size_t DirectWriter::trim() noexcept {
  size_t released = 0;
  for (Pending& p : by_link_) {
    if (!p.queue) continue;
    if (p.used) {
      released += p.queue->trim();
    } else if (p.queue->empty()) {
      released += p.queue->allocated_bytes();
      p.queue.reset();
    }
    p.used = false;
  }
  return released;
}

}  // namespace mavswitch
