// Links whose peer another thread serves: a WebSocket client, read and written by the HTTP
// window's thread. The link itself is a transport::Link on an I/O worker like any other (the
// same parser, counters, filters, signing, shaping, statistics and reload); only its bytes cross
// a thread, through a Handoff, as two Handovers (base/handover.hpp):
// - in: the serving thread's bytes wait in a bounded batch (kMaxInput; beyond it they are
//   dropped and counted) and the first of a batch posts one task to the worker's loop to read
//   them all;
// - out: the worker queues frames in a batch of its own and hands it over once per loop
//   iteration (flush); the frames waiting are bounded (EndpointSpec::datagram_queue_frames: a
//   slow peer fills only its own), and the serving thread is woken (`wake`) once per batch.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "base/handover.hpp"
#include "protocol/frame_batch.hpp"
#include "transport/endpoint.hpp"

namespace mavswitch::transport {

class EventLoop;
class HandoffLink;
class HandoffEndpoint;

using protocol::FrameBatch;

// What a peer sent, and how many of its writes did not fit.
struct InputBytes {
  std::vector<uint8_t> bytes;
  uint64_t dropped = 0;
  bool empty() const noexcept { return bytes.empty() && dropped == 0; }
  void clear() noexcept { bytes.clear(), dropped = 0; }
};

class Handoff : public std::enable_shared_from_this<Handoff> {
 public:
  static constexpr size_t kMaxInput = 64 * 1024;

  // `wake` runs on the worker's thread, without the handoff's lock: it must only signal.
  Handoff(std::string peer, size_t max_queued_frames, std::function<void()> wake);
  Handoff(const Handoff&) = delete;
  Handoff& operator=(const Handoff&) = delete;

  // The serving thread. Bytes from the peer.
  void put(std::span<const uint8_t> bytes);
  // The serving thread. Swaps the frames handed over with `out` (to be empty: its storage is
  // reused by the next batch).
  void take(FrameBatch& out);
  // The serving thread: the peer went. Its link goes down on its worker.
  void close();
  // Either side hung up: the serving thread closes the peer when it sees this.
  bool closed() const noexcept { return closed_.load(std::memory_order_acquire); }
  const std::string& peer() const noexcept { return peer_; }

 private:
  friend class HandoffLink;
  friend class HandoffEndpoint;
  friend class HandoffEntrance;
  void post(std::function<void()> task);  // to the link's worker; not once closed
  void hang_up();                         // the worker's: the link went down

  const std::string peer_;
  const size_t max_queued_frames_;
  const std::function<void()> wake_;
  std::mutex mutex_;
  EventLoop* loop_ = nullptr;  // under mutex_: the worker the link lives on
  Handover<InputBytes> input_;
  Handover<FrameBatch> output_;
  // output_'s, for the worker to bound and report it without the lock
  std::atomic<size_t> queued_frames_{0}, queued_bytes_{0};
  std::atomic<bool> closed_{false};  // set under mutex_
  HandoffLink* link_ = nullptr;      // the worker's: null before it is up and once it is down
};

// How a serving thread opens links on a handoff endpoint: one per endpoint, shared by its maker
// and the serving thread, and attached to the endpoint while it is open.
class HandoffEntrance : public std::enable_shared_from_this<HandoffEntrance> {
 public:
  // At most `max_links` at once (MaxClients), each with at most `max_queued_frames` waiting.
  HandoffEntrance(size_t max_links, size_t max_queued_frames)
      : max_links_(max_links), max_queued_frames_(max_queued_frames) {}
  // The serving thread: whether one more link fits now (no: counted as refused).
  bool has_room();
  // The serving thread: a new peer's handoff, its link to come up on the endpoint's worker; null
  // when the endpoint is full or not open. `wake` as Handoff's.
  std::shared_ptr<Handoff> open(std::string peer, std::function<void()> wake);
  // relaxed: a count for statistics; nothing else is published through it.
  uint64_t refused() const noexcept { return refused_.load(std::memory_order_relaxed); }

 private:
  friend class HandoffEndpoint;
  void gone() noexcept { links_.fetch_sub(1, std::memory_order_relaxed); }
  const size_t max_links_, max_queued_frames_;
  std::mutex mutex_;
  EventLoop* loop_ = nullptr;            // under mutex_: the open endpoint's worker
  HandoffEndpoint* endpoint_ = nullptr;  // the worker's
  std::atomic<size_t> links_{0};         // open or opening
  std::atomic<uint64_t> refused_{0};
};

// The endpoint whose links `entrance` opens (its maker's, a layer above: window/websocket_doors).
std::unique_ptr<Endpoint> make_handoff_endpoint(EndpointSpec spec, LinkHost& host,
                                                std::shared_ptr<HandoffEntrance> entrance);

}  // namespace mavswitch::transport
