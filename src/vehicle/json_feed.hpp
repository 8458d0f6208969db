// One WebSocket client of /v1/ws/mavlink: which routed messages it wants (names by a regex, as
// mavlink2rest's ?filter=, and beyond it a system, a component, at most `rate` a second of each
// message), and the JSON texts that wait for it. Texts are made once per frame and shared by
// every client that gets it; a client that stops reading loses its own oldest, counted.
// Shared by the router's thread (wants, push, wake) and the window's (take), which a Handover
// (base/handover.hpp) joins; closed by either.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/handover.hpp"
#include "protocol/frame.hpp"
#include "vehicle/message_tree.hpp"

namespace mavswitch::vehicle {

using Text = std::shared_ptr<const std::string>;

class JsonFeed {
 public:
  static constexpr size_t kMaxWaiting = 1024;  // texts; then the oldest goes

  struct Filter {
    std::unordered_set<uint32_t> messages;  // the ids whose names match (the regex is applied once)
    std::optional<uint8_t> system, component;
    double rate = 0;  // at most this many a second of each (system, component, message); 0: all
  };
  // `wake` tells the window's thread that texts wait (once per batch handed over).
  JsonFeed(Filter filter, std::function<void()> wake) : filter_(std::move(filter)), waiting_(std::move(wake)) {}

  // The router's thread: whether this client gets `frame` now (its rate counted as sent).
  bool wants(const protocol::FrameView& frame, WallClock::time_point now);
  // The router's thread: `text` joins the batch for the client (no lock per text).
  void push(Text text);
  // The router's thread: hands the batch to the window's thread, under one lock, and wakes it,
  // if anything was pushed since the last time (one wake-up of the window for many texts).
  void wake();
  // The window's thread: what waits, oldest first, in `out` (emptied first).
  void take(std::vector<Text>& out) { waiting_.take(out); }
  void close() {
    closed_.store(true);
    waiting_.close();
  }
  bool closed() const noexcept { return closed_.load(); }
  // relaxed: a count for statistics; nothing else is published through it.
  uint64_t dropped() const noexcept { return dropped_.load(std::memory_order_relaxed); }

 private:
  const Filter filter_;
  std::unordered_map<uint64_t, WallClock::time_point> sent_;  // the router's thread: with a rate only
  std::vector<Text> batch_;                                   // the router's thread: pushed since the last wake()
  Handover<std::vector<Text>> waiting_;                       // handed over, not yet taken
  std::atomic<bool> closed_{false};
  std::atomic<uint64_t> dropped_{0};
};

}  // namespace mavswitch::vehicle
