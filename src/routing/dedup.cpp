#include "routing/dedup.hpp"

#include <bit>
#include <cstring>

namespace mavswitch::routing {
namespace {

// 64-bit FNV-1a over 8-byte words, then a final mix: fast on ~40-byte frames, good enough
// spread for a table index (a collision costs at most one wrongly dropped duplicate check).
uint64_t hash_bytes(std::span<const uint8_t> bytes) noexcept {
  uint64_t h = 0xcbf29ce484222325ull ^ bytes.size();
  size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, bytes.data() + i, 8);
    h = (h ^ w) * 0x100000001b3ull;
  }
  for (; i < bytes.size(); ++i) h = (h ^ bytes[i]) * 0x100000001b3ull;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return h | 1;  // 0 marks an empty slot
}

constexpr size_t kProbe = 8;

}  // namespace

Deduplicator::Deduplicator(Millis period, size_t slots)
    : period_(period), slots_(std::bit_ceil(slots)), mask_(std::bit_ceil(slots) - 1) {}

bool Deduplicator::seen_recently(std::span<const uint8_t> bytes, Millis now) noexcept {
  const uint64_t h = hash_bytes(bytes);
  Slot* oldest = nullptr;
  for (size_t k = 0; k < kProbe; ++k) {
    Slot& s = slots_[(h + k) & mask_];
    if (s.hash == h) {
      const bool recent = now - s.when < period_;
      s.when = now;
      return recent;
    }
    if (oldest == nullptr || s.when < oldest->when) oldest = &s;
  }
  // Not present: take the stalest slot of the probe window (expired or not: memory is bounded).
  oldest->hash = h;
  oldest->when = now;
  return false;
}

}  // namespace mavswitch::routing
