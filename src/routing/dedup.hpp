// Drops a frame seen again (byte for byte) within a period: redundant links deliver the same
// frame twice. A fixed-size table: no allocation per frame, bounded memory whatever arrives.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

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
  struct Slot {
    uint64_t hash = 0;
    Millis when = 0;
  };
  Millis period_;
  std::vector<Slot> slots_;
  size_t mask_;
};

}  // namespace mavswitch::routing
