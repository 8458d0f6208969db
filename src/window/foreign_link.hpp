// A link whose peer is served by a thread other than the router's: a WebSocket client, read
// and written by the window's thread (libwebsockets). Two crossings, both bounded:
// - in: bytes from the peer are posted to the router's loop (at most kMaxPendingInput wait;
//   the rest is dropped and counted; one post per batch), then parsed and routed there like a
//   wire link's bytes;
// - out: what the router sends waits in a bounded queue (max_queued_frames; full: dropped and
//   counted, so a slow peer fills only its own). The queue going from empty to not empty wakes
//   the consumer (`wake`), which takes the frames on its own thread. The router never waits.
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "protocol/parser.hpp"
#include "router/local_link.hpp"
#include "router/router.hpp"

namespace mavswitch::daemon {

// A link's counters, as the statistics show a wire link's.
struct ForeignLinkReport {
  std::string name;  // "ws-gcs 127.0.0.1:50412"
  transport::LinkCounters counters;
  protocol::ParserStats parser;
  size_t queued_bytes = 0;
};

class ForeignLink final : public LocalLink, public std::enable_shared_from_this<ForeignLink> {
 public:
  static constexpr size_t kMaxPendingInput = 64 * 1024;
  using Frames = std::deque<std::vector<uint8_t>>;

  // `wake` runs on the router's thread, without the link's lock: it must only signal.
  ForeignLink(Router& router, std::string name, size_t max_queued_frames, std::function<void()> wake);
  ~ForeignLink();
  ForeignLink(const ForeignLink&) = delete;
  ForeignLink& operator=(const ForeignLink&) = delete;

  // Attaches it to the router with these filters and keys (waits for the router's loop).
  // Throws Router::Stopped when the router has stopped.
  void start(std::shared_ptr<const routing::LinkPolicy> policy);
  // The consumer's thread: bytes from the peer, for the router's thread.
  void received(std::span<const uint8_t> bytes);
  // The router's thread: a frame for the peer, queued for the consumer.
  void deliver(const protocol::FrameView& frame, std::span<const uint8_t> bytes) override;
  // The consumer's thread: moves every queued frame to `out` (empty before the call), and
  // counts those it wrote since the last call.
  void take(Frames& out);
  void count_sent(uint64_t frames, uint64_t bytes);
  // Any thread but the router's: the link goes (waits for the router's loop). Once.
  void close();
  bool closed() const noexcept { return closed_.load(std::memory_order_acquire); }
  ForeignLinkReport report() const;
  const std::string& name() const noexcept { return name_; }

 private:
  void route_input();  // the router's thread

  Router& router_;
  const std::string name_;
  const size_t max_queued_frames_;
  const std::function<void()> wake_;
  routing::LinkId id_ = routing::kNoLink;  // the router's thread
  protocol::FrameParser parser_;           // the router's thread
  mutable std::mutex mutex_;
  std::vector<uint8_t> input_;          // under mutex_
  bool drain_posted_ = false;           // under mutex_
  Frames output_;                       // under mutex_
  size_t queued_bytes_ = 0;             // under mutex_
  bool closing_ = false;                // under mutex_
  std::atomic<bool> closed_{false};     // closing_, for the consumer to look at without the lock
  uint64_t input_dropped_ = 0;          // under mutex_
  transport::LinkCounters counters_;    // under mutex_
  protocol::ParserStats parser_stats_;  // under mutex_
};

}  // namespace mavswitch::daemon
