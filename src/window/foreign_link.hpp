// A link whose peer is served by threads other than the router's: a WebSocket client (civetweb
// reads it). What arrives is handed to the router's thread
// (bounded: kMaxPendingInput bytes wait at most, the rest is dropped and counted; one post per
// batch) and parsed and routed there like a wire link's bytes. What the router sends waits in a
// bounded queue (max_queued_frames) for the link's writer thread: a slow peer fills only its own
// queue, and the router never waits for a socket. Subclasses say how one frame is written.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
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

class ForeignLink : public LocalLink, public std::enable_shared_from_this<ForeignLink> {
 public:
  static constexpr size_t kMaxPendingInput = 64 * 1024;

  ForeignLink(Router& router, std::string name, size_t max_queued_frames);
  virtual ~ForeignLink();
  ForeignLink(const ForeignLink&) = delete;
  ForeignLink& operator=(const ForeignLink&) = delete;

  // Attaches it to the router with these filters and keys, and starts its writer. Throws
  // Router::Stopped when the router has stopped.
  void start(std::shared_ptr<const routing::LinkPolicy> policy);
  // Any thread: bytes from the peer, for the router's thread.
  void received(std::span<const uint8_t> bytes);
  // The router's thread: a frame for the peer, queued for the writer (full: dropped, counted).
  void deliver(const protocol::FrameView& frame, std::span<const uint8_t> bytes) override;
  // Not the router's thread: the link goes, the writer stops. Once.
  void close();
  ForeignLinkReport report() const;
  const std::string& name() const noexcept { return name_; }

 protected:
  // The writer thread: writes one frame. kGone: the peer is gone (the writer stops).
  enum class Written { kSent, kGone };
  virtual Written write(std::span<const uint8_t> frame) = 0;
  Router& router_;

 private:
  void route_input();  // the router's thread
  void write_loop();

  const std::string name_;
  const size_t max_queued_frames_;
  routing::LinkId id_ = routing::kNoLink;  // the router's thread
  protocol::FrameParser parser_;           // the router's thread
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<uint8_t> input_;               // under mutex_
  bool drain_posted_ = false;                // under mutex_
  std::deque<std::vector<uint8_t>> output_;  // under mutex_
  size_t queued_bytes_ = 0;                  // under mutex_
  bool closing_ = false;                     // under mutex_
  uint64_t input_dropped_ = 0;               // under mutex_
  transport::LinkCounters counters_;         // under mutex_
  protocol::ParserStats parser_stats_;       // under mutex_
  std::thread writer_;
};

}  // namespace mavswitch::daemon
