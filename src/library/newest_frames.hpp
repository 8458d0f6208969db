// The newest frame of each (system, component, message) a component is routed, with how often
// it comes: what a reader of "the vehicle's current state" wants (GET /v1/mavlink). Kept as the
// payload's bytes, decoded only when read; a frame costs one probe of a flat table and a copy.
// Router thread only: readers copy it there (Component::newest_frames, run_on_loop).
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <vector>

#include "protocol/frame.hpp"
#include "transport/clock.hpp"

namespace mavswitch {

class NewestFrames {
 public:
  // At most this many slots: a peer inventing systems and components cannot grow it further
  // (past it, new ones are counted in `refused`).
  static constexpr size_t kMaxSlots = 16384;

  struct Slot {
    uint8_t system = 0, component = 0, sequence = 0, payload_len = 0;
    uint32_t msgid = 0;
    std::array<uint8_t, 255> payload{};
    uint64_t counter = 0;
    transport::Millis first = 0, last = 0;  // the router loop's clock (transport/clock.hpp)
    // The rate, rolled when read (not per frame): the count and time a window began at, and the
    // rate of the last finished window.
    uint64_t window_counter = 0;
    transport::Millis window_start = 0;
    float frequency = 0;

    // Frames a second at `now`: the last finished window's rate, unless the current one has gone
    // on longer (a stream that slowed or stopped reads lower, down to zero).
    float frequency_at(transport::Millis now) const noexcept;
  };

  // The frame's slot now holds it: a probe of a flat table and a copy of the payload. Not inline,
  // so that a profile shows its whole cost on the frame path by name.
  void add(const protocol::FrameView& frame, transport::Millis now);

  // A copy of every slot, or of one message's (each system's and component's newest), with
  // their rates' windows rolled at `now`.
  std::vector<Slot> copy(transport::Millis now);
  std::vector<Slot> copy(uint32_t msgid, transport::Millis now);
  size_t size() const noexcept { return slots_.size(); }
  uint64_t refused() const noexcept { return refused_; }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t{0};  // no key is all ones (message ids are 24 bits)
  struct Entry {
    uint64_t key = kEmpty;
    Slot* slot = nullptr;  // in slots_, which never moves a slot
  };
  static uint64_t key_of(uint8_t system, uint8_t component, uint32_t msgid) noexcept {
    return uint64_t{component} << 40 | uint64_t{system} << 32 | msgid;
  }
  size_t slot_of(uint64_t key) const noexcept { return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_); }
  void made(const protocol::FrameView& frame, transport::Millis now, size_t at);            // a new slot, at table_[at]
  void add_probing(const protocol::FrameView& frame, transport::Millis now, uint64_t key);  // not found at once
  void grow();
  void roll(Slot& s, transport::Millis now) noexcept;

  std::deque<Slot> slots_;
  // Open addressing, at most a quarter full: a probe usually finds the key at once.
  std::vector<Entry> table_ = std::vector<Entry>(64);
  size_t mask_ = 63;
  unsigned shift_ = 64 - 6;
  uint64_t refused_ = 0;
};

}  // namespace mavswitch
