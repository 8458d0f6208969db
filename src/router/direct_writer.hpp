// Frames a worker routes to datagram links that other workers own are written by the worker
// itself, on the link's socket: queued per link while its loop iteration runs and sent when it
// ends (sendmmsg, coalesced as the link's own queue would be). Such a frame needs no hand-over
// through a FrameHandover and the owner no wake-up, and a fan-out to many UDP links is written by
// the workers that received its frames, in parallel. Ordering across workers is not owed
// (UDP); each source's frames are routed by one worker, so their order holds.
//
// A DirectTarget is what the owner publishes in its link record (link_records.hpp); the
// writer reads it per frame and uses it only until the end of that iteration (see epochs.hpp
// for its lifetime).
// Peers of one UDP server share its socket, so their datagrams leave in one sendmmsg.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "routing/types.hpp"
#include "transport/link.hpp"
#include "transport/output_queue.hpp"

namespace mavswitch {

struct DirectTarget {
  explicit DirectTarget(transport::DirectWrite w) : write(std::move(w)) {}
  const transport::DirectWrite write;
  // Written by the other workers; the link's statistics add them to its own counters.
  mutable std::atomic<uint64_t> frames_out{0};
  mutable std::atomic<uint64_t> bytes_out{0};
  mutable std::atomic<uint64_t> dropped{0};  // the socket would take no more (counted as queue-full)
};

class DirectWriter {
 public:
  explicit DirectWriter(size_t writer) : writer_(writer) {}  // the worker's index
  // Queues a frame for link `to`, whose placement named `target` in this iteration.
  void queue(routing::LinkId to, const DirectTarget& target, std::span<const uint8_t> frame);
  // Sends everything queued. Afterwards nothing read before is used again.
  void flush();
  // Gives back what kept queues no longer need (see transport::QuietShrink), and drops the
  // queues of links not written to since the last trim (a peer heard once, or gone); between
  // flushes. Returns the bytes given back.
  size_t trim() noexcept;
  // relaxed: a count for statistics; nothing else is published through it.
  uint64_t frames_written() const noexcept { return written_.load(std::memory_order_relaxed); }
  size_t storage() const noexcept;  // bytes its kept queues hold allocated (the writer's thread)

 private:
  struct Shape {  // what a queue was made for
    size_t frames = 0;
    bool coalesce = false;
    bool segment = false;
    bool operator==(const Shape&) const = default;
  };
  struct Pending {
    const DirectTarget* target = nullptr;  // set while this iteration queued for the link
    std::unique_ptr<transport::DatagramQueue> queue;
    Shape shape;
    bool used = false;  // since the last trim
  };
  void send(Pending& p);
  void account(Pending& p, const transport::DatagramQueue::PeerSend& sent);

  std::vector<Pending> by_link_;  // by link id; queues are kept for the next iteration
  size_t writer_;
  std::vector<routing::LinkId> pending_;
  std::vector<transport::DatagramQueue::PeerSend> sends_;  // one socket's share of a flush
  std::atomic<uint64_t> written_{0};                       // read by statistics from other threads
};

}  // namespace mavswitch
