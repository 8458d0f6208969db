// Drops a frame seen again (byte for byte) within a period: redundant links deliver the same
// frame twice. A fixed-size table: no allocation per frame, bounded memory whatever arrives.
// Shared by every I/O worker without a lock: a slot is one atomic word (hash and time), so a
// race between two workers can at worst let one duplicate through.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>

#include "routing/types.hpp"

namespace mavswitch::routing {

class Deduplicator {
 public:
  explicit Deduplicator(Millis period, size_t slots = 1 << 14);

  // True when these bytes were seen less than `period` ago. Either way they are (re)recorded
  // at now, so a steady repetition keeps being dropped ("the second one resets the timer").
  bool seen_recently(std::span<const uint8_t> bytes, Millis now) noexcept;
  Millis period() const noexcept { return period_; }

 private:
  Millis period_;
  std::unique_ptr<std::atomic<uint64_t>[]> slots_;  // hash (high 40 bits) | time (low 24 bits)
  size_t mask_;
};

}  // namespace mavswitch::routing
