// Per-message rate limits for one direction of a link (RateLimitOut = ATTITUDE:10, *:2): at
// most so many frames a second per (source system, source component, message). A frame that
// comes too soon is dropped, so what passes is always the newest value (decimation); nothing
// is held back to be sent stale. The request/answer protocols and targeted frames are left
// alone unless their message is named (protocol/message_class.hpp).
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "protocol/frame.hpp"

namespace mavswitch::transport {

struct RateLimits {
  struct Rule {
    uint32_t msgid;
    double per_second;
  };
  std::vector<Rule> named;  // sorted by msgid
  double others = 0;        // '*': any other message but protocol and targeted ones; 0: unlimited

  bool empty() const noexcept { return named.empty() && others <= 0; }
  void add(uint32_t msgid, double per_second);  // a later rule for the same id replaces it
  // Frames a second allowed for this frame's stream; 0: not limited.
  double rate_for(const protocol::FrameView& f) const noexcept;
};

// Whether a frame due at `next` (its stream's due time, advanced here when it passes) may pass
// at `now_us`, one every `interval_us`.
bool admit_due(int64_t& next, int64_t interval_us, int64_t now_us) noexcept;

// What each stream (source system, component, message) may send to one link: the rates the
// link's own peer asked for (the router's message rates). A stream not named passes; one asked
// off never does. Its owner's thread only.
class StreamWishes {
 public:
  static constexpr int64_t kOff = -1;
  // One every `interval_us` from now on (kOff: none; 0: no wish, all pass).
  void set(uint8_t sysid, uint8_t compid, uint32_t msgid, int64_t interval_us);
  bool admit(const protocol::FrameView& f, int64_t now_us);
  bool empty() const noexcept { return wishes_.empty(); }
  // A MESSAGE_INTERVAL (a component saying how often it sends a message) about a stream wished
  // for here: written into `out` saying the wish instead, so the peer hears the rate it gets.
  // Otherwise (another message, no wish, signed) `bytes`, f as it goes out, unchanged.
  std::span<const uint8_t> tell_own(const protocol::FrameView& f, std::span<const uint8_t> bytes,
                                    std::span<uint8_t> out) const;

 private:
  struct Wish {
    int64_t interval_us;
    int64_t next_us;
  };
  std::unordered_map<uint64_t, Wish> wishes_;  // by stream key
};

// The state of one direction of one link; its owner's thread only.
class RateLimiter {
 public:
  explicit RateLimiter(const RateLimits& limits) : limits_(limits) {}
  // True when the frame may pass at `now_us` (monotonic microseconds).
  bool admit(const protocol::FrameView& f, int64_t now_us);
  size_t streams() const noexcept { return next_.size(); }

 private:
  // A peer inventing sources cannot grow this without bound: past it, the table starts again.
  static constexpr size_t kMaxStreams = 4096;
  const RateLimits& limits_;                    // the endpoint's: it outlives its links
  std::unordered_map<uint64_t, int64_t> next_;  // stream -> when its next frame may pass
};

}  // namespace mavswitch::transport
