// The newest frame of each (system, component, message), with how often it comes: what
// GET /v1/mavlink shows, kept as raw bytes and decoded only when asked (no allocation per frame
// once a message has its slot). The router's thread adds; a copy is rendered elsewhere.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "protocol/frame.hpp"
#include "rest/message_json.hpp"

namespace mavswitch::rest {

using WallClock = std::chrono::system_clock;

class MessageTree {
 public:
  // At most this many slots: a peer inventing systems and components cannot grow it further
  // (past it, new ones are counted in `refused`).
  static constexpr size_t kMaxSlots = 16384;

  struct Slot {
    uint8_t system = 0, component = 0, sequence = 0, payload_len = 0;
    uint32_t msgid = 0;
    std::array<uint8_t, 255> payload{};
    uint64_t counter = 0;
    WallClock::time_point first, last;
    // The rate: frames in the current window and when it began; the last finished window's.
    WallClock::time_point window_start;
    int32_t window_frames = 0;
    float frequency = 0;
  };

  // The router's thread: the frame's slot now holds it.
  void add(const protocol::FrameView& frame, WallClock::time_point now);
  // The router's thread: a copy of every slot (a few hundred bytes each), to render elsewhere.
  std::vector<Slot> copy() const { return slots_; }
  // The router's thread: a copy of the slots of one message (each system's and component's newest).
  std::vector<Slot> copy(uint32_t msgid) const {
    std::vector<Slot> some;
    for (const Slot& s : slots_)
      if (s.msgid == msgid) some.push_back(s);
    return some;
  }
  uint64_t refused() const noexcept { return refused_; }

  // GET /v1/mavlink's tree ({"vehicles":{"1":{"id":1,"components":{...}}}}) of `slots`, at `now`.
  static std::string render(const std::vector<Slot>& slots, const MessageJson& json, WallClock::time_point now);

 private:
  std::vector<Slot> slots_;
  std::unordered_map<uint64_t, uint32_t> index_;  // (system, component, msgid) -> slots_
  uint64_t refused_ = 0;
};

// ISO-8601 in local time with its offset and nanoseconds, as mavlink2rest writes times:
// "2026-12-04T10:01:02.123456789+00:00".
std::string iso_time(WallClock::time_point t);

}  // namespace mavswitch::rest
